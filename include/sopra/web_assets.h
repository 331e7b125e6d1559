/*
 * web_assets: the page the HTTP port serves (http.h), the files of
 * resources/web/ compiled in. CMake generates the arrays from the files at
 * build time (cmake/embed.cmake), so the files stay the one source: edit
 * them and rebuild. Each array holds the file's bytes and then a NUL that
 * is not counted in its length.
 */
#ifndef SOPRA_WEB_ASSETS_H
#define SOPRA_WEB_ASSETS_H

#include <stddef.h>

extern const unsigned char sopra_web_index_html[];
extern const size_t sopra_web_index_html_len;
extern const unsigned char sopra_web_app_js[];
extern const size_t sopra_web_app_js_len;
extern const unsigned char sopra_web_style_css[];
extern const size_t sopra_web_style_css_len;

#endif
