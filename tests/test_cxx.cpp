// test_cxx: include/srcu.h and include/srcu_gate.h compile as C++
// (warning-free) and their inline paths, macros and static initializers
// work from C++ code.
#include "srcu.h"
#include "srcu_gate.h"

#include <cstdio>

DEFINE_STATIC_SRCU(cxx_domain);
static DEFINE_SRCU_GATE(cxx_gate);
static int reset_fn(void *) { return 3; }

struct config { int value; };
static config first{1}, second{2};
static config *current = &first;

// Braced initializers carry commas the preprocessor would split: the
// macros must take any expression.
struct limits { int lo, hi; };
struct settings { int id; limits range; };
static settings *live = nullptr;

int main()
{
	int idx = srcu_read_lock(&cxx_domain);
	config *c = srcu_dereference(current, &cxx_domain);
	int seen = c->value;
	srcu_read_unlock(&cxx_domain, idx);
	srcu_assign_pointer(current, &second);
	synchronize_srcu(&cxx_domain);
	srcu_assign_pointer(live, new settings{7, {1, 2}});
	idx = srcu_read_lock(&cxx_domain);
	bool held = srcu_read_lock_held(&cxx_domain);
	settings *s = srcu_dereference(live, static_cast<srcu_struct *>(&cxx_domain));
	int range = s->range.hi - s->range.lo;
	srcu_read_unlock(&cxx_domain, idx);
	bool held_after = srcu_read_lock_held(&cxx_domain);
	// The pointer API of issue 24 in C++: braced initializers again, and
	// a replace that hands back the old object to delete.
	bool owner = true;
	settings *peek = srcu_access_pointer(live);
	settings *prot = srcu_dereference_protected(live, owner);
	settings *chk = srcu_dereference_check(live, &cxx_domain, owner);
	// v is not last here (the kernel's order: p, v, c): braces with
	// commas need parentheses.
	settings *old = srcu_replace_pointer(live, (new settings{8, {0, 5}}), owner);
	bool ptrs_ok = peek == s && prot == s && chk == s && old == s && live->id == 8;
	settings *last = srcu_replace_pointer(live, static_cast<settings *>(nullptr), owner);
	synchronize_srcu(&cxx_domain);
	delete old;
	delete last;
	int tag = srcu_gate_enter(&cxx_gate);
	if (tag >= 0)
		srcu_gate_exit(&cxx_gate, tag);
	if (seen != 1 || srcu_batches_completed(&cxx_domain) != 2 || tag < 0 ||
	    !held || held_after || range != 1 || !ptrs_ok ||
	    srcu_gate_reset(&cxx_gate, reset_fn, nullptr) != 3) {
		std::printf("test_cxx: FAIL\n");
		return 1;
	}
	std::printf("test_cxx: PASS (backend %s)\n", srcu_backend());
	return 0;
}
