/*
 * default_config: the game sopra-server serves when it is given no --config,
 * the bytes of resources/example.json compiled in. CMake generates the array
 * from that file at build time (cmake/embed.cmake), so the file stays the one
 * source: edit resources/example.json and rebuild.
 */
#ifndef SOPRA_DEFAULT_CONFIG_H
#define SOPRA_DEFAULT_CONFIG_H

#include <stddef.h>

/* The file's bytes, followed by a NUL that is not counted in the length. */
extern const unsigned char sopra_default_config[];
extern const size_t sopra_default_config_len;

/* The file compiled in (CMakeLists.txt: SOPRA_DEFAULT_CONFIG), as the
 * help and the log name it. */
#define SOPRA_DEFAULT_CONFIG_FILE "resources/example.json"

/* How errors and the journal's configPath name the compiled-in
 * configuration (there is no path to read it from). */
#define SOPRA_DEFAULT_CONFIG_NAME "built-in:" SOPRA_DEFAULT_CONFIG_FILE

#endif
