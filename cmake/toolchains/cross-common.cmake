# Shared by the per-architecture toolchain files of this directory: a
# Debian cross compiler (gcc-<triple>) whose target libraries live under
# /usr/<triple>, and qemu-user to run what it builds.  The including file
# sets SRCU_CROSS_TRIPLE, SRCU_CROSS_PROCESSOR and SRCU_CROSS_QEMU (empty:
# the target runs natively, as i686 does on x86-64).
#
#   cmake -S . -B build-cross-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64.cmake
#
# scripts/check-cross.sh (make check-cross) configures, builds and tests
# each one; doc/testing.md, "Cross-architecture runs".
#
# SPDX-License-Identifier: MIT
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${SRCU_CROSS_PROCESSOR})
set(CMAKE_C_COMPILER ${SRCU_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${SRCU_CROSS_TRIPLE}-g++)

# Headers and libraries of the target only (a host liburcu or Concurrency
# Kit must not be picked up for an aarch64 build); programs of the host.
set(CMAKE_FIND_ROOT_PATH /usr/${SRCU_CROSS_TRIPLE} /usr/lib/${SRCU_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config: the target's .pc files (Debian multiarch), never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${SRCU_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

if(SRCU_CROSS_QEMU)
  # ctest runs every test binary through it (add_test() prepends it);
  # tests that exec binaries themselves get it as SRCU_TEST_EXEC_PREFIX
  # (tests/CMakeLists.txt).  -L: the target's dynamic loader and libc.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SRCU_CROSS_QEMU} -L /usr/${SRCU_CROSS_TRIPLE})
endif()
