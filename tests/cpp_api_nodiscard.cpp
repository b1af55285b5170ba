// cpp_api_nodiscard: a guard whose value is dropped must not compile
// (-Werror), or a section meant to cover a block would end at once.
// Bug caught: read_lock() or read_guard without [[nodiscard]].  Compiled
// only (ctest, WILL_FAIL); with -DSRCU_KEEP_GUARD it must compile.
#include <srcu.hpp>

int reader(srcu::domain &dom);

int reader(srcu::domain &dom)
{
#ifdef SRCU_KEEP_GUARD
	auto guard = srcu::read_lock(dom);
#else
	srcu::read_lock(dom);
#endif
	return 0;
}
