# i686: i686-linux-gnu-gcc, run under nothing (native) (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE i686-linux-gnu)
set(SRCU_CROSS_PROCESSOR i686)
# Natively by default; -DSRCU_I686_QEMU=ON runs the tests under qemu-i386
# instead, for a host kernel without IA32 emulation (exec of an i386 ELF
# fails: "Exec format error"; scripts/check-cross.sh tries one first).
if(SRCU_I686_QEMU)
  set(SRCU_CROSS_QEMU qemu-i386)
else()
  set(SRCU_CROSS_QEMU )
endif()
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
# Natively: qemu-i386 7.2 was seen to hang in glibc's pthread_create.  Debian's
# gcc-multilib conflicts with the cross compilers, so the i386 libc is
# the cross one, found at run time through the interpreter and rpath.
set(CMAKE_EXE_LINKER_FLAGS_INIT
  "-Wl,--dynamic-linker=/usr/i686-linux-gnu/lib/ld-linux.so.2 -Wl,-rpath,/usr/i686-linux-gnu/lib")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath,/usr/i686-linux-gnu/lib")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-Wl,-rpath,/usr/i686-linux-gnu/lib")
