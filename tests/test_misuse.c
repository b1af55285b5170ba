/*
 * test_misuse: mistakes that would hang or corrupt a domain fail loudly,
 * with a message naming the domain and the mistake.  Each case runs in a
 * child process that must abort (a hang or a silent return fails).
 */
#include "check.h"

static struct srcu_struct named;

static void make_named(void)
{
	REQUIRE(init_srcu_struct(&named) == 0);
	srcu_set_name(&named, "misuse-domain");
}

static void sync_inside_own_section(void)
{
	make_named();
	srcu_read_lock(&named);
	synchronize_srcu(&named);           /* would wait for itself */
}

static void sync_exp_inside_nested_section(void)
{
	make_named();
	srcu_read_lock(&named);
	srcu_read_lock(&named);
	synchronize_srcu_expedited(&named);
}

static void unlock_without_lock(void)
{
	int idx;

	make_named();
	idx = srcu_read_lock(&named);       /* this thread has counters now */
	srcu_read_unlock(&named, idx);
	srcu_read_unlock(&named, 0);        /* would end someone else's section */
	synchronize_srcu(&named);           /* ...so the next scan reports it */
}

static void unlock_first_in_thread(void)
{
	make_named();
	srcu_read_unlock(&named, 0);        /* no counters yet: reported at once */
}

static void unlock_twice(void)
{
	int idx;

	make_named();
	idx = srcu_read_lock(&named);
	srcu_read_unlock(&named, idx);
	srcu_read_unlock(&named, idx);
	synchronize_srcu(&named);
}

static void *extra_unlock_then_exit(void *arg)
{
	(void)arg;
	srcu_read_unlock(&named, srcu_read_lock(&named));
	srcu_read_unlock(&named, 1);
	return NULL;   /* reported at thread exit (at once with fences) */
}

static void unlock_extra_then_exit(void)
{
	make_named();
	join(spawn(extra_unlock_then_exit, NULL));
}

static void unlock_bad_index(void)
{
	make_named();
	srcu_read_lock(&named);
	srcu_read_unlock(&named, 7);
}

static int cross_idx;

static void *unlock_elsewhere(void *arg)
{
	(void)arg;
	srcu_read_unlock(&named, cross_idx);
	return NULL;
}

static void unlock_in_other_thread(void)
{
	make_named();
	cross_idx = srcu_read_lock(&named);
	join(spawn(unlock_elsewhere, NULL));
}

static void use_after_cleanup(void)
{
	make_named();
	REQUIRE(cleanup_srcu_struct(&named) == 0);
	srcu_read_lock(&named);
}

static void sync_after_cleanup(void)
{
	make_named();
	REQUIRE(cleanup_srcu_struct(&named) == 0);
	synchronize_srcu(&named);
}

static void up_without_down(void)
{
	make_named();
	srcu_up_read(&named, 1);
}

static void sync_null(void)
{
	synchronize_srcu(NULL);
}

static void lock_uninitialized(void)
{
	struct srcu_struct junk;

	memset(&junk, 0x5a, sizeof(junk));  /* garbage, not a domain */
	junk.name = "junk";
	srcu_read_lock(&junk);
}

/* A sync on another domain from inside a section is legal: no abort. */
static void sync_other_domain_inside_section(void)
{
	struct srcu_struct other;

	make_named();
	REQUIRE(init_srcu_struct(&other) == 0);
	int idx = srcu_read_lock(&named);
	synchronize_srcu(&other);
	srcu_read_unlock(&named, idx);
	abort();   /* reached: expected outcome, reported as a clean abort */
}

int main(void)
{
	watchdog(100);
	CHECK(dies_saying(sync_inside_own_section, "synchronize_srcu()",
			  "inside its own read-side critical section", "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_exp_inside_nested_section, "synchronize_srcu_expedited()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_without_lock, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_first_in_thread, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_twice, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_extra_then_exit, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_bad_index, "index 7", "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_in_other_thread, "without a matching srcu_read_lock()",
			  "srcu_up_read", NULL));
	CHECK(dies_saying(use_after_cleanup, "srcu_read_lock()", "after cleanup_srcu_struct()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_after_cleanup, "after cleanup_srcu_struct()", NULL));
	CHECK(dies_saying(up_without_down, "srcu_up_read()", "without a matching",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_null, "NULL domain", NULL));
	CHECK(dies_saying(lock_uninitialized, "never initialized", "'junk'", NULL));
	CHECK(dies_saying(sync_other_domain_inside_section, NULL));
	return check_report("test_misuse");
}
