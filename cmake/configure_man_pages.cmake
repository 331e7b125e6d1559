# Run at install time (CMakeLists.txt, "Packaging"): the man pages name the
# installed files by the default prefix's paths, /usr/local/share/sopra-server
# (schema, examples) and /usr/local/share/doc/sopra-server (the documents);
# this writes a copy of each page with the paths of the prefix it is being
# installed to. The prefix is known only now: `cmake --install --prefix DIR`
# chooses it after the build was configured.
#
# In: SOPRA_MAN_PAGES (the source pages), SOPRA_MAN_OUT (the directory for the
# copies), SOPRA_DATADIR and SOPRA_DOCDIR (GNUInstallDirs' values, relative
# to the prefix or absolute), and CMAKE_INSTALL_PREFIX as cmake --install sets it.
foreach(v SOPRA_DATADIR SOPRA_DOCDIR)
  if(NOT IS_ABSOLUTE "${${v}}")
    set(${v} "${CMAKE_INSTALL_PREFIX}/${${v}}")
  endif()
endforeach()
foreach(page IN LISTS SOPRA_MAN_PAGES)
  file(READ "${page}" text)
  string(REPLACE "/usr/local/share/doc/sopra-server" "${SOPRA_DOCDIR}" text "${text}")
  string(REPLACE "/usr/local/share/sopra-server" "${SOPRA_DATADIR}/sopra-server" text "${text}")
  get_filename_component(name "${page}" NAME)
  file(WRITE "${SOPRA_MAN_OUT}/${name}" "${text}")
endforeach()
