# armhf: arm-linux-gnueabihf-gcc, run under qemu-arm (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE arm-linux-gnueabihf)
set(SRCU_CROSS_PROCESSOR arm)
set(SRCU_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
