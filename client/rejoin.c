/*
 * rejoin: the kept secret and the reconnect schedule (rejoin.h).
 */
#include "rejoin.h"

#include "toolutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_HEAD "sopra-client session\n"

/* s into out[*k..] with every byte but [A-Za-z0-9.-] as %XX; false when it
 * does not fit. */
static bool put_escaped(char *out, size_t n, size_t *k, const char *s)
{
	static const char keep[] =
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int w = c && strchr(keep, c) ? snprintf(out + *k, n - *k, "%c", c)
		                             : snprintf(out + *k, n - *k, "%%%02X", c);
		if (w < 0 || (size_t)w >= n - *k)
			return false;
		*k += (size_t)w;
	}
	return true;
}

int rejoin_path(char *out, size_t n, const char *host, int port, const char *name, char *err,
                size_t errlen)
{
	if (state_dir("sopra-client", out, n, err, errlen) != 0)
		return -1;
	size_t k = strlen(out);
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "_%d_", port);
	if (k + 1 < n) {
		out[k++] = '/';
		out[k] = '\0';
	}
	bool ok = put_escaped(out, n, &k, host) && k + strlen(portbuf) < n;
	if (ok) {
		memcpy(out + k, portbuf, strlen(portbuf) + 1);
		k += strlen(portbuf);
		ok = put_escaped(out, n, &k, name) && k + sizeof ".session" <= n;
	}
	if (!ok) {
		snprintf(err, errlen, "the name of the session file is too long");
		return -1;
	}
	memcpy(out + k, ".session", sizeof ".session");
	return 0;
}

static bool is_secret(const char *s)
{
	return strlen(s) == REJOIN_SECRET_HEX && strspn(s, "0123456789abcdef") == REJOIN_SECRET_HEX;
}

int rejoin_save(const char *path, const char *secret, int player, char *err, size_t errlen)
{
	if (!is_secret(secret) || player < 0) {
		snprintf(err, errlen, "not a session secret");
		return -1;
	}
	char text[sizeof FILE_HEAD + REJOIN_SECRET_HEX + 64];
	int len = snprintf(text, sizeof text, FILE_HEAD "player %d\nsecret %s\n", player, secret);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	/* fchmod: an older file may have another mode */
	bool ok = fd >= 0 && fchmod(fd, 0600) == 0 && write(fd, text, (size_t)len) == len;
	int e = errno;
	if (fd >= 0 && close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		snprintf(err, errlen, "cannot keep the session in %s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

int rejoin_load(const char *path, char *secret, int *player, char *err, size_t errlen)
{
	char *text = read_file(path, NULL);
	if (!text) {
		snprintf(err, errlen, "no session kept in %s: %s", path, strerror(errno));
		return -1;
	}
	char hex[REJOIN_SECRET_HEX + 2] = "";
	int p = -1;
	bool ok = strncmp(text, FILE_HEAD, strlen(FILE_HEAD)) == 0 &&
	          sscanf(text + strlen(FILE_HEAD), "player %d\nsecret %65s", &p, hex) == 2 &&
	          p >= 0 && is_secret(hex);
	free(text);
	if (!ok) {
		snprintf(err, errlen, "%s is not a session file of sopra-client", path);
		return -1;
	}
	memcpy(secret, hex, REJOIN_SECRET_HEX + 1);
	*player = p;
	return 0;
}

void rejoin_forget(const char *path)
{
	if (path && *path)
		unlink(path);
}

double rejoin_delay(int attempt)
{
	double d = 0.5;
	for (int i = 1; i < attempt && d < 4.0; i++)
		d *= 2;
	return d;
}
