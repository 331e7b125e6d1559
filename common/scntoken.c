/* scntoken: see scntoken.h. */
#include "scntoken.h"

#include <string.h>

bool scn_looks_int(const char *word)
{
	if (*word == '-' || *word == '+')
		word++;
	if (!*word)
		return false;
	for (; *word; word++)
		if (*word < '0' || *word > '9')
			return false;
	return true;
}

bool scn_bare_ok(const char *s)
{
	if (!*s || scn_looks_int(s) || !strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "?"))
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == '"' || *p == '#' || *p == '\\' || *p == 0x7f)
			return false;
	return true;
}

/* Whether a quoted token can hold s: one line, no control character but a tab. */
static bool quotable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == 0x7f || (*p < 0x20 && *p != '\t'))
			return false;
	return true;
}

bool scn_put_token(FILE *out, const char *s)
{
	if (scn_bare_ok(s)) {
		fprintf(out, " %s", s);
		return true;
	}
	if (!quotable(s))
		return false;
	fputs(" \"", out);
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', out);
		fputc(*p, out);
	}
	fputc('"', out);
	return true;
}
