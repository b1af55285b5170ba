# riscv64: riscv64-linux-gnu-gcc, run under qemu-riscv64 (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE riscv64-linux-gnu)
set(SRCU_CROSS_PROCESSOR riscv64)
set(SRCU_CROSS_QEMU qemu-riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
