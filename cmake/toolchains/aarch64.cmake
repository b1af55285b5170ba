# aarch64: aarch64-linux-gnu-gcc, run under qemu-aarch64 (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE aarch64-linux-gnu)
set(SRCU_CROSS_PROCESSOR aarch64)
set(SRCU_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
