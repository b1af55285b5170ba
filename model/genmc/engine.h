/*
 * model/genmc/engine.h: the engine as it ships, in one translation unit
 * for GenMC: every file of src/ but backend.c, which model/genmc/backend.c
 * replaces, after the platform's stand-ins (platform.h), and the two of
 * process-shared domains' files (shared_file.c, shared_domain.c: files,
 * mmap of them, fcntl locks, none of which GenMC models; the engine calls
 * them only for a shared domain, and no scenario here makes one).  A scenario
 * includes this, then writes its threads.
 *
 * The build (verify.sh): clang-14 through GenMC with SRCU_NO_ASM (the
 * read side in C11 atomics: GenMC ignores asm) and the verification
 * switches below.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_VERIFY_ENGINE_H
#define SRCU_VERIFY_ENGINE_H

#include "platform.h"

void verify_ipi_point(void);
/* The read side's membarrier-paired barriers are IPI landing points. */
#define srcu__read_barrier() do { srcu__barrier(); verify_ipi_point(); } while (0)

#include "../../src/report.c"
#include "backend.c"
#include "../../src/combine.c"
#include "../../src/fence.c"
#include "../../src/domain.c"
#include "../../src/reader.c"
#include "../../src/stall.c"
#include "../../src/users.c"
#include "../../src/counts_records.c"
#include "../../src/counts_slots.c"
#include "../../src/gp.c"
#include "../../src/async.c"
#include "../../src/lifecycle.c"
#include "../../src/process.c"
#include "../../src/gate.c"

/* shared_file.c's one variable that the files above name: no shared
 * domain is attached. */
struct srcu__shm_att srcu__shm_att[SRCU__SHARED_BLOCKS];

#endif
