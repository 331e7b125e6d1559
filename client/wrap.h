/*
 * wrap: a line of text cut into rows of at most `width` columns, between
 * words where it can (a word longer than a row is cut). The rows after the
 * first are `indent` columns narrower: the caller draws them indented, so
 * a wrapped log entry reads as one. Columns are bytes (the client's text
 * is ASCII apart from names from the configuration).
 */
#ifndef SOPRA_CLIENT_WRAP_H
#define SOPRA_CLIENT_WRAP_H

struct wrap_row {
	int off, len; /* the row's bytes in the text */
};

/* Cut s into rows; writes at most max of them into rows (rows may be NULL
 * when max is 0) and returns how many there are in all (1 for "").
 * width < 1 counts as 1; an indent that leaves less than 1 column is
 * ignored. */
int wrap_text(const char *s, int width, int indent, struct wrap_row *rows, int max);

#endif
