/* log: one log line (include/sopra/log.h). */
#include "sopra/log.h"

#include <stdarg.h>

/* A line up to this long goes out in one write (stderr is unbuffered:
 * piece by piece it would be three system calls, and lines of processes
 * sharing the stream could interleave); a longer one in pieces. */
#define LOG_LINE_MAX 1024
/* What every line starts with, before the module's prefix. */
#define LOG_HEAD "sopra-server: %s"

void sopra_log(FILE *out, const char *prefix, const char *fmt, ...)
{
	if (!out)
		return;
	char line[LOG_LINE_MAX];
	int head = snprintf(line, sizeof line, LOG_HEAD, prefix);
	va_list ap;
	va_start(ap, fmt);
	int body = head < 0 || (size_t)head >= sizeof line
	                   ? -1
	                   : vsnprintf(line + head, sizeof line - (size_t)head, fmt, ap);
	va_end(ap);
	if (body >= 0 && (size_t)head + (size_t)body + 1 < sizeof line) {
		line[head + body] = '\n';
		fwrite(line, 1, (size_t)head + (size_t)body + 1, out);
	} else { /* too long for the buffer: in pieces */
		va_start(ap, fmt);
		fprintf(out, LOG_HEAD, prefix);
		vfprintf(out, fmt, ap);
		fputc('\n', out);
		va_end(ap);
	}
	fflush(out);
}
