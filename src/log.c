/* log: one log line (include/sopra/log.h). */
#include "sopra/log.h"

#include <stdarg.h>

void sopra_log(FILE *out, const char *prefix, const char *fmt, ...)
{
	if (!out)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(out, "sopra-server: %s", prefix);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	va_end(ap);
	fflush(out);
}
