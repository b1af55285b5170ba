# ppc64le: powerpc64le-linux-gnu-gcc, run under qemu-ppc64le (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE powerpc64le-linux-gnu)
set(SRCU_CROSS_PROCESSOR ppc64le)
set(SRCU_CROSS_QEMU qemu-ppc64le)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
