/*
 * replay: run a fuzz target's LLVMFuzzerTestOneInput over saved inputs,
 * without libFuzzer (any compiler). Used by the ctest tests
 * fuzz_replay_<target> on fuzz/corpus/<target> and fuzz/regressions/<target>.
 *
 *   replay_<target> PATH...
 *
 * Each PATH is a file or a directory (its files, sorted by name, not
 * recursive; names starting with "." are skipped). A missing directory is
 * reported and skipped. A failing input aborts the process (the harness
 * prints which input); otherwise prints "replay: N inputs, 0 failed".
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ninputs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	size_t cap = 4096, len = 0;
	char *tmp = xmalloc(cap);
	size_t got;
	while ((got = fread(tmp + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			cap *= 2;
			tmp = xrealloc(tmp, cap);
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(tmp);
		return 1;
	}
	/* An exactly sized copy, like libFuzzer's, so that sanitizer builds
	 * catch reads past the end. */
	uint8_t *data = xmalloc(len);
	if (len)
		memcpy(data, tmp, len);
	free(tmp);
	printf("replay: %s (%zu bytes)\n", path, len);
	fflush(stdout);
	fuzz_current_input = path;
	LLVMFuzzerTestOneInput(data, len);
	fuzz_current_input = NULL;
	free(data);
	ninputs++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: skipping %s: %s\n", dir, strerror(errno));
		return 0;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = xreallocarray(names, cap, sizeof *names);
		}
		size_t l = strlen(dir) + strlen(de->d_name) + 2;
		names[n] = xmalloc(l);
		snprintf(names[n], l, "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			rc |= run_file(names[i]);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc |= run_dir(argv[i]);
		else if (stat(argv[i], &st) == 0)
			rc |= run_file(argv[i]);
		else
			fprintf(stderr, "replay: skipping %s: %s\n", argv[i], strerror(errno));
	}
	printf("replay: %d inputs, %d failed\n", ninputs, rc ? 1 : 0);
	if (ninputs == 0) {
		fprintf(stderr, "replay: no input found\n");
		return 1;
	}
	return rc;
}
