/*
 * static_nss: only in the static build (SOPRA_STATIC=ON).
 *
 * glibc's name service functions load NSS modules with dlopen at run time,
 * which a static binary cannot do reliably; the linker warns about each one
 * it sees. The server never resolves a name (it listens on INADDR_ANY and
 * prints peers with inet_ntop): these functions are referenced only by
 * libevent's evutil_getaddrinfo, which nothing in the server calls. Defining
 * them here keeps glibc's NSS code out of the binary and the link clean; if
 * anything did call them, it gets the documented failure result, not a
 * crash.
 */
#include <netdb.h>
#include <stddef.h>
#include <sys/socket.h>

/* The declarations in <netdb.h> are the prototypes; -Wmissing-prototypes is
 * satisfied by them. */

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
	(void)node;
	(void)service;
	(void)hints;
	if (res)
		*res = NULL;
	return EAI_FAIL;
}

void freeaddrinfo(struct addrinfo *res)
{
	(void)res; /* getaddrinfo above never returns a list */
}

struct servent *getservbyname(const char *name, const char *proto)
{
	(void)name;
	(void)proto;
	return NULL;
}

struct protoent *getprotobynumber(int proto)
{
	(void)proto;
	return NULL;
}
