# The Debian package: faultd_<version>_<arch>.deb, built by CPack from the same install() rules
# as `cmake --install`, so the package and a hand install cannot drift apart.
#
#   cpack -G DEB                                              # in the build directory
#   cpack -G DEB -B OUTDIR --config BUILD/CPackConfig.cmake   # anywhere, leaves BUILD untouched
#
# What the package adds to the install rules: the maintainer scripts in packaging/debian/ (the
# `faultd` group, enabling/starting/stopping the unit, cleaning up on purge), every file under
# /etc marked as a conffile (listed at packaging time by packaging/debian/conffiles.cmake from
# what was really staged, so a new rule pack or hook needs no edit here), the docs and the
# cluster examples under /usr/share/doc/faultd, and the runtime dependencies.

# Docs and the cluster-side examples (Prometheus rules, Alertmanager, Grafana, Kubernetes) go to
# the doc directory: they are used on other machines, a node only carries them for reference.
file(GLOB _faultd_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_faultd_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR})
foreach(_dir prometheus grafana kubernetes)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/etc/${_dir})
    install(DIRECTORY etc/${_dir}/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/${_dir})
  endif()
endforeach()

# Debian's copyright file and the changelog (gzipped, as policy wants it, without a timestamp
# so that the package is reproducible).
install(FILES packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
find_program(FAULTD_GZIP gzip REQUIRED)
mark_as_advanced(FAULTD_GZIP)
execute_process(COMMAND ${FAULTD_GZIP} -9nc ${PROJECT_SOURCE_DIR}/packaging/debian/changelog
                OUTPUT_FILE ${PROJECT_BINARY_DIR}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
install(FILES ${PROJECT_BINARY_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages (faultd(8), faultctl(8), faultd.yaml(5)) and faultctl's bash completion.
install(FILES packaging/man/faultd.8 packaging/man/faultctl.8
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES packaging/man/faultd.yaml.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
install(FILES packaging/bash-completion/faultctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME faultd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR faultd)
set(FAULTD_PACKAGE_MAINTAINER "faultd maintainers <faultd@localhost>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${FAULTD_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${FAULTD_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "fault-detection daemon for AI training nodes (Ascend NPU, NVIDIA GPU)")
# Debian wants the long description in lines under 80 columns; CPack indents each one.
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "faultd tails the runtime logs of a training node, matches them against fault"
  "rules, marks the faulty accelerator, runs the operator's isolation,"
  "checkpoint-resume and diagnosis hooks exactly once, and exports device states,"
  "faults and its own health as Prometheus metrics. It runs as a systemd service;"
  "faultctl talks to it.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Maintainer scripts 0755, conffiles 0644, whatever the source tree's modes are.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Runtime libraries: dpkg-shlibdeps (package dpkg-dev, and `file` to find the ELF files) derives
# them, with versions, from what the binaries really link. Without those tools, the same list by
# hand, as Debian 12 names the packages.
find_program(FAULTD_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(FAULTD_FILE_PROGRAM file)
mark_as_advanced(FAULTD_DPKG_SHLIBDEPS FAULTD_FILE_PROGRAM)
if(FAULTD_DPKG_SHLIBDEPS AND FAULTD_FILE_PROGRAM)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(_faultd_depends)
else()
  set(_faultd_depends
      libc6 libstdc++6 libgcc-s1 libre2-9 libyaml-cpp0.7 libspdlog1.10 libfmt9
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libsqlite3-0 libsystemd0 zlib1g)
endif()
# Six of the seven shipped hooks are Python scripts; faultd itself runs without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS python3)
# postinst creates the group with addgroup (adduser) or groupadd (passwd), whichever is there.
list(PREPEND _faultd_depends "adduser | passwd")
list(JOIN _faultd_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

# The shipped binaries are stripped and their symbols go to faultd-dbgsym_<version>_<arch>.ddeb
# beside the package, for the day a node's core dump needs reading. CPack finds the unstripped
# ELF files with `file`; without it the binaries ship as built.
if(FAULTD_FILE_PROGRAM)
  set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
endif()

set(_faultd_debian ${PROJECT_SOURCE_DIR}/packaging/debian)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${_faultd_debian}/postinst ${_faultd_debian}/prerm ${_faultd_debian}/postrm)
set(CPACK_PRE_BUILD_SCRIPTS ${_faultd_debian}/conffiles.cmake)

include(CPack)
