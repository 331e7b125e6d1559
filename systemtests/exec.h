/* Running one scenario against a real server process. */
#ifndef SOPRA_EXEC_H
#define SOPRA_EXEC_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    const char *server; /* path of the sopra-server binary */
    bool verbose;       /* always print the transcript */
    bool valgrind;      /* run the server under valgrind; waits are longer */
    bool fixed_ports;   /* pick a free port ourselves instead of --port 0 */
    /* --journal-dir: run each server with --journal DIR/<name>.jnl and, after a
     * PASS, check that `replay --conn N` prints exactly what client N got */
    const char *journal_dir;
    const char *replay; /* the sopra-replay binary */
} run_opts;

/* Load, run and judge the scenario at path. Writes "PASS name" or
 * "FAIL name: reason" (plus indented details) to out. Returns 0 on PASS. */
int run_scenario_file(const char *path, const char *name, const run_opts *o, FILE *out);

#endif
