# Write a C source file that holds the bytes of a file as an array, so that a
# program can carry the file while the file stays the one source of it.
#
#   cmake -DINPUT=FILE -DOUTPUT=OUT.c -DSYMBOL=NAME -DHEADER=HEADER.h -P embed.cmake
#
# OUT.c defines `const unsigned char NAME[]` (the bytes, then a NUL) and
# `const size_t NAME_len` (the number of bytes, without the NUL), as HEADER.h
# declares them. OUT.c is rewritten only when its text changes.
foreach(var INPUT OUTPUT SYMBOL HEADER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
# 0xNN, per byte; a line break after every 16
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
set(sixteen "")
foreach(i RANGE 1 16) # CMake's regular expressions have no {16}
  string(APPEND sixteen "0x[0-9a-f][0-9a-f],")
endforeach()
string(REGEX REPLACE "(${sixteen})" "\\1\n" bytes "${bytes}")
get_filename_component(input_name "${INPUT}" NAME)

set(text "/* Generated from ${input_name} by cmake/embed.cmake at build time: do not edit. */
#include <stddef.h>

#include \"${HEADER}\"

const unsigned char ${SYMBOL}[] = {
${bytes}
0x00};
const size_t ${SYMBOL}_len = ${size};
")
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "${text}" @ONLY)
