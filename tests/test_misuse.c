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

/*
 * Bug caught: a sleeping GP's check of unlocks that read only the
 * domain's reader set.  A thread with a record (it read another domain)
 * ends the main thread's section with the inline unlock: the count lands
 * in its own record, which never locked this domain and so is not in its
 * reader set.  It stays alive (its exit would report it), so only the
 * sleeping GP's check can find the extra unlock; reading the set alone,
 * the GP waited for the main thread's section forever.  (With fences the
 * unlock's own check reports it at once.)
 */
static struct srcu_struct other_domain;
static int cross_done;

static void *unlock_elsewhere_and_stay(void *arg)
{
	(void)arg;
	srcu_read_unlock(&other_domain, srcu_read_lock(&other_domain));
	srcu_read_unlock(&named, cross_idx);
	__atomic_store_n(&cross_done, 1, __ATOMIC_RELEASE);
	for (;;)
		sleep_ms(1000);
	return NULL;
}

static void *sync_named(void *arg)
{
	(void)arg;
	synchronize_srcu(&named);
	return NULL;
}

static void unlock_elsewhere_then_sync(void)
{
	make_named();
	REQUIRE(init_srcu_struct(&other_domain) == 0);
	srcu_set_stall_timeout(&named, 100);
	srcu_set_stall_handler(NULL, NULL);
	cross_idx = srcu_read_lock(&named);
	spawn(unlock_elsewhere_and_stay, NULL);
	while (!__atomic_load_n(&cross_done, __ATOMIC_ACQUIRE))
		sleep_us(100);
	join(spawn(sync_named, NULL));   /* not this thread: its slot holds the lock */
}

/* Bug caught: an unlock given the wrong domain was reported as an extra
 * unlock, with srcu_down_read() suggested, though the thread held a
 * section of another domain: the message names that domain now.  Found
 * by the thread itself (its synchronize: at once with fences) and by
 * another thread's grace-period scan. */
static struct srcu_struct held_domain;

static void unlock_wrong_domain(void)
{
	int idx;

	make_named();
	REQUIRE(init_srcu_struct_named(&held_domain, "held-domain") == 0);
	idx = srcu_read_lock(&held_domain);
	srcu_read_unlock(&named, idx);      /* meant: &held_domain */
	synchronize_srcu(&named);
}

/* The thread's section of held_domain stays open, its unlock given
 * named (which the main thread holds: the GP sleeps, and its check of
 * every record finds the extra unlock). */
static void *unlock_wrong_domain_and_stay(void *arg)
{
	(void)arg;
	srcu_read_unlock(&named, srcu_read_lock(&held_domain));
	__atomic_store_n(&cross_done, 1, __ATOMIC_RELEASE);
	for (;;)
		sleep_ms(1000);
	return NULL;
}

static void unlock_wrong_domain_found_by_scan(void)
{
	make_named();
	REQUIRE(init_srcu_struct_named(&held_domain, "held-domain") == 0);
	srcu_set_stall_timeout(&named, 100);
	srcu_set_stall_handler(NULL, NULL);
	(void)srcu_read_lock(&named);
	spawn(unlock_wrong_domain_and_stay, NULL);
	while (!__atomic_load_n(&cross_done, __ATOMIC_ACQUIRE))
		sleep_us(100);
	join(spawn(sync_named, NULL));   /* not this thread: its slot holds the lock */
}

/* Bug caught: a domain freed after cleanup_srcu_struct() said -EBUSY (the
 * kernel's habit: its cleanup returns nothing) was named by its address
 * in the warning of the thread that exited inside it: free() had
 * overwritten its name pointer.  The name is kept from the failed
 * cleanup.  The memory is scribbled on, not freed (the library reads it
 * after: a sanitizer build would report that). */
static int busy_in, busy_go;

static void *busy_reader(void *arg)
{
	(void)srcu_read_lock(arg);
	flag_set(&busy_in);
	flag_wait(&busy_go);
	return NULL;   /* inside the section: warned of at exit */
}

static void freed_after_busy_cleanup(void)
{
	struct srcu_struct *sp = malloc(sizeof(*sp));
	pthread_t t;

	REQUIRE(sp && init_srcu_struct_named(sp, "busy-domain") == 0);
	t = spawn(busy_reader, sp);
	flag_wait(&busy_in);
	REQUIRE(cleanup_srcu_struct(sp) == -EBUSY);
	memset(sp, 0xa5, sizeof(*sp));   /* freed and reused, as free() would */
	flag_set(&busy_go);
	join(t);
	abort();   /* reached: the warning is checked */
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

/* Every call that reads a domain, after its cleanup: each aborts, naming
 * the call and the domain (doc/guide.md, "Rules": use after cleanup).  Bug caught:
 * srcu_batches_completed(), srcu_get_stats(), srcu_set_stall_timeout()
 * and srcu_set_backlog_limit() read (or wrote) the dead domain and
 * returned as if it were live. */
static void cleaned_up(void)
{
	make_named();
	REQUIRE(cleanup_srcu_struct(&named) == 0);
}

static void dead_cb(struct srcu_head *h) { (void)h; }
static struct srcu_head dead_head;
static struct srcu_stats dead_stats;

static void dead_batches(void) { cleaned_up(); (void)srcu_batches_completed(&named); }
static void dead_stats_get(void) { cleaned_up(); (void)srcu_get_stats(&named, &dead_stats); }
static void dead_stall_timeout(void) { cleaned_up(); (void)srcu_set_stall_timeout(&named, 5); }
static void dead_backlog(void) { cleaned_up(); (void)srcu_set_backlog_limit(&named, 5); }
static void dead_sync_exp(void) { cleaned_up(); synchronize_srcu_expedited(&named); }
static void dead_expedite(void) { cleaned_up(); srcu_expedite_current(&named); }
static void dead_get_state(void) { cleaned_up(); (void)get_state_synchronize_srcu(&named); }
static void dead_start_poll(void) { cleaned_up(); (void)start_poll_synchronize_srcu(&named); }
static void dead_poll(void) { cleaned_up(); (void)poll_state_synchronize_srcu(&named, 0); }
static void dead_call(void) { cleaned_up(); call_srcu(&named, &dead_head, dead_cb); }
static void dead_barrier(void) { cleaned_up(); srcu_barrier(&named); }
static void dead_down(void) { cleaned_up(); (void)srcu_down_read(&named); }
static void dead_up(void) { cleaned_up(); srcu_up_read(&named, 0); }
static void dead_lock_fast(void) { cleaned_up(); (void)srcu_read_lock_fast(&named); }

static const struct { void (*fn)(void); const char *call; } dead_calls[] = {
	{ dead_batches, "srcu_batches_completed()" },
	{ dead_stats_get, "srcu_get_stats()" },
	{ dead_stall_timeout, "srcu_set_stall_timeout()" },
	{ dead_backlog, "srcu_set_backlog_limit()" },
	{ dead_sync_exp, "synchronize_srcu_expedited()" },
	{ dead_expedite, "srcu_expedite_current()" },
	{ dead_get_state, "get_state_synchronize_srcu()" },
	{ dead_start_poll, "start_poll_synchronize_srcu()" },
	{ dead_poll, "poll_state_synchronize_srcu()" },
	{ dead_call, "call_srcu()" },
	{ dead_barrier, "srcu_barrier()" },
	{ dead_down, "srcu_down_read()" },
	{ dead_up, "srcu_up_read()" },
	{ dead_lock_fast, "srcu_read_lock_fast()" },
};

static void check_calls_after_cleanup(void)
{
	for (size_t i = 0; i < sizeof(dead_calls) / sizeof(dead_calls[0]); i++)
		if (!dies_saying(dead_calls[i].fn, dead_calls[i].call, "after cleanup_srcu_struct()",
				 "'misuse-domain'", NULL)) {
			fprintf(stderr, "%s after cleanup did not abort as it should\n",
				dead_calls[i].call);
			check_failures++;
		}
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

/* The NULL policy (doc/guide.md, "The API at a glance"): calls that return an error code say
 * -EINVAL (test_api); the others abort naming the call. */
static void batches_null(void) { (void)srcu_batches_completed(NULL); }
static void poll_null(void) { (void)poll_state_synchronize_srcu(NULL, 0); }
static void down_read_null(void) { (void)srcu_down_read(NULL); }
static void up_read_null(void) { srcu_up_read(NULL, 0); }
static void get_state_null(void) { (void)get_state_synchronize_srcu(NULL); }
static void barrier_null(void) { srcu_barrier(NULL); }

static void lock_uninitialized(void)
{
	struct srcu_struct junk;

	memset(&junk, 0x5a, sizeof(junk));  /* garbage, not a domain */
	junk.name = "junk";
	srcu_read_lock(&junk);
}

/* Bug caught: a second init of a live domain was accepted silently; it
 * dropped the domain's id (a leak) and its readers' counts, and a later
 * fork deadlocked. */
static void init_live_domain(void)
{
	make_named();
	init_srcu_struct(&named);
}

/* A thread inside a section of idx 0 whose GP, run by another thread,
 * has flipped to index 1 and sleeps waiting for it. */
static void *background_sync(void *arg)
{
	(void)arg;
	synchronize_srcu(&named);
	return NULL;
}

static int lock_on_index(int want)
{
	for (;;) {
		int idx = srcu_read_lock(&named);

		if (idx == want)
			return idx;
		srcu_read_unlock(&named, idx);
		sleep_us(100);
	}
}

/*
 * Bug caught: an unlock given the other section's index.  Here a section
 * of index 0, then one of index 1 (after a GP flipped), then the first is
 * ended with index 1: index 1 looks idle though its section is still
 * open, and index 0 never drains, so the GP asleep on it hung forever.
 * Now the sleeping GP's check of the other index finds more unlocks than
 * locks and aborts, naming the domain (here at its first stall deadline).
 */
static void unlock_with_other_index(void)
{
	int a, b;

	make_named();
	srcu_set_stall_timeout(&named, 100);
	srcu_set_stall_handler(NULL, NULL);
	a = lock_on_index(0);
	spawn(background_sync, NULL);
	b = lock_on_index(1);        /* the GP flipped and waits for a */
	srcu_read_unlock(&named, 1); /* meant: srcu_read_unlock(&named, a) */
	srcu_read_unlock(&named, b);
	(void)a;
	sleep_ms(5000);              /* the GP's scan reports it meanwhile */
}

/* The same mistake with srcu_up_read(): the first up_read with the wrong
 * index balances the other index against a section still open there;
 * the next up_read of that index has no down_read left to match. */
static void up_read_with_other_index(void)
{
	int a, b;

	make_named();
	a = srcu_down_read(&named);
	while (a != 0) {                 /* a section of index 0 */
		srcu_up_read(&named, a);
		synchronize_srcu(&named);
		a = srcu_down_read(&named);
	}
	spawn(background_sync, NULL);    /* flips, then waits for a */
	while ((b = srcu_down_read(&named)) != 1) {
		srcu_up_read(&named, b);
		sleep_us(100);
	}
	srcu_up_read(&named, 1);         /* meant: srcu_up_read(&named, a) */
	srcu_up_read(&named, b);
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

/* ---- garbage: an uninitialized malloc()'d srcu_struct ---- */

#include <sys/mman.h>

static struct srcu_struct *garbage(int byte)
{
	struct srcu_struct *g = malloc(sizeof(*g));

	REQUIRE(g);
	memset(g, byte, sizeof(*g));
	return g;
}

/* Bug caught: the message about a garbage domain read its garbage name
 * pointer (SIGSEGV inside the report): it names the address instead. */
static void sync_garbage(void)
{
	synchronize_srcu(garbage(0xa5));
}

/* The same with words that say "cleaned up": the read side's slow path
 * reports it, through the same name. */
static void lock_garbage_dead(void)
{
	struct srcu_struct *g = garbage(0xa5);

	g->slot_word = g->lock_word = SRCU__ID_DEAD * SRCU__SLOT_WORDS;
	srcu_read_lock(g);
}

/* Can n bytes at p be read?  The kernel's copy says so, not a fault. */
static bool readable(const void *p, size_t n)
{
	int fd[2];
	bool ok;

	REQUIRE(pipe(fd) == 0);
	ok = write(fd[1], p, n) == (ssize_t)n;
	close(fd[0]);
	close(fd[1]);
	return ok;
}

/*
 * Bug caught: a garbage srcu_struct whose words are near 65535 made the
 * inline unlock count up to 3 words past this thread's counter table (the
 * next mapping: perhaps another record's ->next) and read past
 * srcu__gp_waits[].  The header promises that garbage stays inside the
 * table: the words just past it must not change.  (With the fence backend
 * the unlock takes the slow path, which reports the domain by address.)
 */
static void unlock_garbage_near_end(void)
{
	struct srcu_struct *g = garbage(0xff);
	unsigned long *end, before[4] = { 0 };
	bool probe;

	make_named();
	srcu_read_unlock(&named, srcu_read_lock(&named));   /* the table exists */
	end = srcu__slots ? (unsigned long *)srcu__slots + SRCU__TABLE_WORDS : NULL;
	probe = end && readable(end, sizeof(before));
	if (probe)
		memcpy(before, end, sizeof(before));
	srcu_read_unlock(g, 0);
	srcu_read_unlock(g, 1);
	if (probe && memcmp(before, end, sizeof(before)) != 0) {
		fprintf(stderr, "the unlock wrote past the thread's counter table\n");
		_exit(1);
	}
	fprintf(stderr, "nothing written past the table\n");
	abort();
}

/* Bug caught: an unlock given the other section's index was reported as
 * an unlock without a lock, with no hint at the likelier mistake. */
static void unlock_other_index(void)
{
	int idx;

	make_named();
	idx = srcu_read_lock(&named);
	srcu_read_unlock(&named, idx ^ 1);
	synchronize_srcu(&named);           /* the scan reports it (membarrier) */
}

/* Bug caught: srcu_barrier() inside a section of its domain returned when
 * no callback was pending: a latent deadlock the docs say aborts. */
static void barrier_inside_section_idle(void)
{
	make_named();
	srcu_read_lock(&named);
	srcu_barrier(&named);
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
	CHECK(dies_saying(unlock_elsewhere_then_sync, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(unlock_wrong_domain, "without a matching srcu_read_lock()",
			  "'misuse-domain'", "holds sections of domain 'held-domain'",
			  "wrong domain", NULL));
	CHECK(dies_saying(unlock_wrong_domain_found_by_scan, "without a matching srcu_read_lock()",
			  "'misuse-domain'", "holds sections of domain 'held-domain'",
			  "wrong domain", NULL));
	CHECK(dies_saying(freed_after_busy_cleanup, "exited inside 1 read-side critical section(s) "
			  "of domain 'busy-domain'", NULL));
	CHECK(dies_saying(use_after_cleanup, "srcu_read_lock()", "after cleanup_srcu_struct()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_after_cleanup, "after cleanup_srcu_struct()", NULL));
	check_calls_after_cleanup();
	CHECK(dies_saying(up_without_down, "srcu_up_read()", "without a matching",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_null, "NULL domain", NULL));
	CHECK(dies_saying(batches_null, "srcu_batches_completed()", "NULL domain", NULL));
	CHECK(dies_saying(poll_null, "poll_state_synchronize_srcu()", "NULL domain", NULL));
	CHECK(dies_saying(down_read_null, "srcu_down_read()", "NULL domain", NULL));
	CHECK(dies_saying(up_read_null, "srcu_up_read()", "NULL domain", NULL));
	CHECK(dies_saying(get_state_null, "get_state_synchronize_srcu()", "NULL domain", NULL));
	CHECK(dies_saying(barrier_null, "srcu_barrier()", "NULL domain", NULL));
	CHECK(dies_saying(lock_uninitialized, "never initialized", "'junk'", NULL));
	CHECK(dies_saying(sync_other_domain_inside_section, NULL));
	CHECK(dies_saying(init_live_domain, "init_srcu_struct()", "'misuse-domain'", "live",
			  NULL));
	CHECK(dies_saying(unlock_with_other_index, "without a matching srcu_read_lock()",
			  "'misuse-domain'", NULL));
	CHECK(dies_saying(up_read_with_other_index, "srcu_up_read()", "'misuse-domain'", NULL));
	CHECK(dies_saying(sync_garbage, "never initialized", "srcu_struct@0x", NULL));
	CHECK(dies_saying(lock_garbage_dead, "after cleanup_srcu_struct()", "srcu_struct@0x",
			  NULL));
	CHECK(dies_saying(unlock_garbage_near_end,
			  strcmp(srcu_backend(), "fence") ? "nothing written past the table" :
			  "srcu_struct@0x", NULL));
	CHECK(dies_saying(unlock_other_index, "without a matching srcu_read_lock()",
			  "other section's index", "'misuse-domain'", NULL));
	CHECK(dies_saying(barrier_inside_section_idle, "srcu_barrier()",
			  "inside a read-side section", "'misuse-domain'", NULL));
	return check_report("test_misuse");
}
