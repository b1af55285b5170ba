# libsrcu-urcu: libsrcu as a liburcu flavour, and liburcu's names on it
# (include/srcu_urcu.h, src/urcu/).  Built when liburcu's headers are
# found (Debian: liburcu-dev); its tests, example and srcu-bench figure
# come with it.  SRCU_URCU=OFF leaves it out; ON makes liburcu required.
set(SRCU_URCU AUTO CACHE STRING "Build libsrcu-urcu: AUTO, ON or OFF")
set(SRCU_HAVE_URCU OFF)
if(NOT SRCU_URCU STREQUAL "OFF")
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(URCU_CDS IMPORTED_TARGET liburcu-cds)
    # The peer the example and srcu-bench's figure 10 compare with.
    pkg_check_modules(URCU_MEMB IMPORTED_TARGET liburcu-memb)
  endif()
  if(URCU_CDS_FOUND)
    set(SRCU_HAVE_URCU ON)
  elseif(SRCU_URCU STREQUAL "ON")
    message(FATAL_ERROR "SRCU_URCU=ON: liburcu-cds not found (apt-get install liburcu-dev)")
  else()
    message(STATUS "libsrcu-urcu: liburcu-dev not found, not built")
  endif()
endif()

if(SRCU_HAVE_URCU)
  # Shared only: its default domain and per-thread word must be one per
  # process, whatever links it.
  add_library(srcu_urcu SHARED src/urcu/srcu_urcu.c)
  add_library(srcu::srcu_urcu ALIAS srcu_urcu)
  # liburcu's headers only: the program links liburcu-cds itself when it
  # uses the data structures (pkg-config srcu-urcu requires it).
  # An installed program that links srcu::srcu_urcu gets liburcu-cds too
  # (find_package(srcu)), as pkg-config srcu-urcu gives it.
  target_link_libraries(srcu_urcu PUBLIC srcu
    INTERFACE $<INSTALL_INTERFACE:urcu-cds> $<INSTALL_INTERFACE:urcu-common>)
  target_include_directories(srcu_urcu PUBLIC ${URCU_CDS_INCLUDE_DIRS})
  set_target_properties(srcu_urcu PROPERTIES OUTPUT_NAME srcu-urcu
    VERSION ${PROJECT_VERSION} SOVERSION 0
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
    LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/urcu/libsrcu-urcu.map)
  target_link_options(srcu_urcu PRIVATE
    -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/src/urcu/libsrcu-urcu.map)
  # libsrcu-urcu.a as well, for programs linked statically: one object (a
  # single source file), linked after it libsrcu.a.  Its default domain and
  # per-thread words are the program's: link it into one module only.
  add_library(srcu_urcu_static STATIC src/urcu/srcu_urcu.c)
  target_link_libraries(srcu_urcu_static PUBLIC srcu_static
    INTERFACE $<INSTALL_INTERFACE:urcu-cds> $<INSTALL_INTERFACE:urcu-common>)
  target_include_directories(srcu_urcu_static PUBLIC ${URCU_CDS_INCLUDE_DIRS})
  set_target_properties(srcu_urcu_static PROPERTIES OUTPUT_NAME srcu-urcu
    POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden
    ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  # The liburcu drop-in (doc/urcu.md, "Switching with one variable"):
  # headers under liburcu's names (include/srcu-urcu/) and pkg-config
  # modules under liburcu's names in a directory of their own, so that
  # PKG_CONFIG_PATH=<that directory> moves a program that finds liburcu
  # through pkg-config onto libsrcu-urcu, and nothing else ever finds them.
  # Self-contained (no Requires): the real liburcu-cds, whose flags they
  # carry, would otherwise be looked up in their own directory.  The build
  # tree has a set too, with its own paths and an rpath to its libraries.
  set(SRCU_URCU_DROPIN_MODULES liburcu liburcu-memb liburcu-cds)
  string(REPLACE ";" " " DROPIN_URCU_CFLAGS "${URCU_CDS_CFLAGS}")
  string(REPLACE ";" " " DROPIN_URCU_LIBS "${URCU_CDS_LDFLAGS}")
  function(srcu_urcu_dropin_pc dir)
    foreach(DROPIN_MODULE ${SRCU_URCU_DROPIN_MODULES})
      if(DROPIN_MODULE STREQUAL "liburcu-cds")
        set(DROPIN_WHAT "liburcu's data structures (liburcu-cds) with the default flavour")
      else()
        set(DROPIN_WHAT "liburcu's default (memb) flavour")
      endif()
      configure_file(${PROJECT_SOURCE_DIR}/cmake/liburcu-dropin.pc.in ${dir}/${DROPIN_MODULE}.pc @ONLY)
    endforeach()
  endfunction()
  set(SRCU_URCU_DROPIN_PCDIR ${CMAKE_BINARY_DIR}/srcu-urcu/pkgconfig CACHE INTERNAL
    "The build tree's liburcu drop-in modules")
  set(DROPIN_PREFIX ${CMAKE_BINARY_DIR})
  set(DROPIN_LIBDIR ${CMAKE_BINARY_DIR})
  set(DROPIN_INCLUDEDIR ${PROJECT_SOURCE_DIR}/include)
  set(DROPIN_HEADERS ${PROJECT_SOURCE_DIR}/include/srcu-urcu)
  set(DROPIN_RPATH "-Wl,-rpath,${CMAKE_BINARY_DIR} ")
  srcu_urcu_dropin_pc(${SRCU_URCU_DROPIN_PCDIR})
  if(SRCU_INSTALL)
    file(RELATIVE_PATH DROPIN_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/srcu-urcu/pkgconfig ${CMAKE_INSTALL_PREFIX})
    set(DROPIN_PREFIX "\${pcfiledir}/${DROPIN_TO_PREFIX}")
    set(DROPIN_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
    set(DROPIN_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
    set(DROPIN_HEADERS "\${includedir}/srcu-urcu")
    set(DROPIN_RPATH "")
    srcu_urcu_dropin_pc(${CMAKE_BINARY_DIR}/srcu-urcu/installed)
    install(DIRECTORY include/srcu-urcu/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/srcu-urcu)
    install(DIRECTORY ${CMAKE_BINARY_DIR}/srcu-urcu/installed/
      DESTINATION ${CMAKE_INSTALL_LIBDIR}/srcu-urcu/pkgconfig)
  endif()
  if(SRCU_INSTALL)
    file(RELATIVE_PATH SRCU_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
    configure_file(srcu-urcu.pc.in ${CMAKE_BINARY_DIR}/srcu-urcu.pc @ONLY)
    set_target_properties(srcu_urcu_static PROPERTIES EXPORT_NAME srcu_urcu_static)
    install(TARGETS srcu_urcu srcu_urcu_static EXPORT srcuUrcuTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
    # find_package(srcu) includes it when present: srcu::srcu_urcu.  An
    # export set of its own, so that the Debian package libsrcu-dev can
    # ship without it (libsrcu-urcu-dev has it).
    install(EXPORT srcuUrcuTargets NAMESPACE srcu::
      DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/srcu)
    install(FILES include/srcu_urcu.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    install(FILES ${CMAKE_BINARY_DIR}/srcu-urcu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  endif()
endif()
