# s390x: s390x-linux-gnu-gcc, run under qemu-s390x (cross-common.cmake).
# SPDX-License-Identifier: MIT
set(SRCU_CROSS_TRIPLE s390x-linux-gnu)
set(SRCU_CROSS_PROCESSOR s390x)
set(SRCU_CROSS_QEMU qemu-s390x)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
