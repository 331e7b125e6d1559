/* usage: a usage error, reported the same way by every program
 * (include/sopra/usage.h). */
#include "sopra/usage.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

void sopra_usage_verror(const char *prog, const char *help_text, const char *fmt, va_list ap)
{
	assert(prog && help_text && fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	const char *end = strstr(help_text, "\n\n");
	size_t len = end ? (size_t)(end - help_text) + 1 : strlen(help_text);
	fwrite(help_text, 1, len, stderr);
	if (len > 0 && help_text[len - 1] != '\n')
		fputc('\n', stderr);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
}

void sopra_usage_error(const char *prog, const char *help_text, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sopra_usage_verror(prog, help_text, fmt, ap);
	va_end(ap);
}
