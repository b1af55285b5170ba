# musl: Debian's musl-gcc (musl-tools), x86-64, run natively.  Marked as
# a cross build (CMAKE_SYSTEM_NAME): the host's pkg-config, liburcu and
# install/package checks are glibc's and are left out (tests/CMakeLists.txt
# says which).  musl-gcc searches musl's headers only: the kernel's
# (linux/, asm/, asm-generic/, which libsrcu includes for futex and
# membarrier) are linked into the build tree and added after them.  No
# C++: musl-gcc is a C compiler wrapper.
# SPDX-License-Identifier: MIT
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER musl-gcc)
set(CMAKE_CXX_COMPILER "")          # check_language(CXX) then finds none

set(SRCU_MUSL_KERNEL_HEADERS ${CMAKE_BINARY_DIR}/musl-kernel-headers)
if(NOT EXISTS ${SRCU_MUSL_KERNEL_HEADERS}/linux)
  file(MAKE_DIRECTORY ${SRCU_MUSL_KERNEL_HEADERS})
  foreach(d /usr/include/linux /usr/include/asm-generic /usr/include/x86_64-linux-gnu/asm)
    get_filename_component(n ${d} NAME)
    file(CREATE_LINK ${d} ${SRCU_MUSL_KERNEL_HEADERS}/${n} SYMBOLIC)
  endforeach()
endif()
set(CMAKE_C_FLAGS_INIT "-idirafter ${SRCU_MUSL_KERNEL_HEADERS}")

set(CMAKE_FIND_ROOT_PATH /usr/lib/musl /usr/include/x86_64-linux-musl)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /nonexistent)   # no .pc file is musl's
set(ENV{PKG_CONFIG_PATH} "")
# gcc's libtsan is glibc's: a -fsanitize=thread program links, then fails
# to load.  No TSan test on musl.
set(SRCU_CC_HAS_TSAN OFF CACHE BOOL "ThreadSanitizer: not with musl")
