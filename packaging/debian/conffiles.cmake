# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): marks every regular file staged under /etc as
# a conffile, so dpkg keeps an operator's edits to the config, rule packs and hooks on upgrade
# and asks before replacing them. Runs inside cpack after the staging install, with
# CPACK_TEMPORARY_DIRECTORY holding the package's root; the list goes into the control archive
# through CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA, which CPack reads after this script.
set(_root "${CPACK_TEMPORARY_DIRECTORY}")
file(GLOB_RECURSE _staged LIST_DIRECTORIES false RELATIVE "${_root}" "${_root}/etc/*")
set(_conffiles)
foreach(_path IN LISTS _staged)
  if(NOT IS_SYMLINK "${_root}/${_path}")  # dpkg only tracks plain files as conffiles
    list(APPEND _conffiles "/${_path}")
  endif()
endforeach()
if(NOT _conffiles)
  message(FATAL_ERROR "faultd packaging: nothing staged under ${_root}/etc; install rules broken?")
endif()
list(SORT _conffiles)
list(JOIN _conffiles "\n" _text)
# The control directory is CPack's own scratch space for this run (inside -B's directory), so
# packaging never writes into the source or build tree.
set(_control "${CPACK_TOPLEVEL_DIRECTORY}/faultd-control")
file(MAKE_DIRECTORY "${_control}")
file(WRITE "${_control}/conffiles" "${_text}\n")
list(APPEND CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${_control}/conffiles")
