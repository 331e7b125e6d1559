/*
 * wrap: text cut into rows (wrap.h).
 */
#include "wrap.h"

#include <string.h>

int wrap_text(const char *s, int width, int indent, struct wrap_row *rows, int max)
{
	if (width < 1)
		width = 1;
	if (width - indent < 1)
		indent = 0;
	int len = (int)strlen(s), off = 0, n = 0;
	do {
		int w = n == 0 ? width : width - indent;
		int take = len - off;
		if (take > w) {
			take = w;
			/* the last space within the row (or just after it) ends the row */
			int cut = take;
			while (cut > 0 && s[off + cut] != ' ')
				cut--;
			if (cut > 0)
				take = cut;
		}
		if (n < max)
			rows[n] = (struct wrap_row){off, take};
		n++;
		off += take;
		while (off < len && s[off] == ' ')
			off++;
	} while (off < len);
	return n;
}
