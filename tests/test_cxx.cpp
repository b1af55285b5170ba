// test_cxx: include/srcu.h compiles as C++ (warning-free) and its inline
// read side, macros and static initializer work from C++ code.
#include "srcu.h"

#include <cstdio>

DEFINE_STATIC_SRCU(cxx_domain);

struct config { int value; };
static config first{1}, second{2};
static config *current = &first;

int main()
{
	int idx = srcu_read_lock(&cxx_domain);
	config *c = srcu_dereference(current, &cxx_domain);
	int seen = c->value;
	srcu_read_unlock(&cxx_domain, idx);
	srcu_assign_pointer(current, &second);
	synchronize_srcu(&cxx_domain);
	if (seen != 1 || srcu_batches_completed(&cxx_domain) != 1) {
		std::printf("test_cxx: FAIL\n");
		return 1;
	}
	std::printf("test_cxx: PASS (backend %s)\n", srcu_backend());
	return 0;
}
