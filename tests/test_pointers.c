/*
 * test_pointers: the pointer API (srcu_dereference(), _check(),
 * _protected(), srcu_access_pointer(), srcu_assign_pointer(),
 * srcu_replace_pointer()): values, evaluation, publication.  Built twice:
 * test_pointers as users build, test_pointers_debug with -DSRCU_DEBUG,
 * where the death tests at the end check the checking build's reports.
 * Each case names the bug it catches.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

struct obj {
	long a, b;
	struct obj *next;
};

DEFINE_STATIC_SRCU(ptr_dom);
DEFINE_STATIC_SRCU(other_dom);

static struct obj o1 = { 1, 10, NULL }, o2 = { 2, 20, NULL };
static struct obj *head = &o1;
static int sp_evals, c_evals, p_evals;

static struct srcu_struct *dom_counted(void) { sp_evals++; return &ptr_dom; }
static bool cond_counted(bool v) { c_evals++; return v; }
static struct obj **head_counted(void) { p_evals++; return &head; }

/* Bug caught: a macro that returns the wrong value or type (a cast lost,
 * NULL not accepted), or that does not work outside a section where it
 * must (access_pointer, dereference_check with c, protected). */
static void test_values(void)
{
	int idx = srcu_read_lock(&ptr_dom);
	struct obj *p = srcu_dereference(head, &ptr_dom);

	CHECK(p == &o1);
	CHECK_EQ(p->b, 10);
	CHECK_EQ(srcu_dereference_check(head, &ptr_dom, 0)->a, 1);   /* c false, inside */
	CHECK(srcu_dereference_notrace(head, &ptr_dom) == &o1);
	srcu_read_unlock(&ptr_dom, idx);

	CHECK(srcu_access_pointer(head) == &o1);                      /* outside: legal */
	CHECK(srcu_dereference_check(head, &ptr_dom, 1) == &o1);      /* c true, outside */
	CHECK(srcu_dereference_check(head, &other_dom, 1) == &o1);    /* a domain never used */
	CHECK(srcu_dereference_protected(head, 1) == &o1);
	CHECK(srcu_assign_pointer(head, &o2) == &o2);
	CHECK(srcu_access_pointer(head) == &o2);

	/* Not only pointers: an index published the same way. */
	unsigned int slot = 3;
	CHECK_EQ(srcu_access_pointer(slot), 3);
	CHECK_EQ(srcu_replace_pointer(slot, 4u, 1), 3);
	CHECK_EQ(slot, 4);
	head = &o1;
}

/* Bug caught: srcu_replace_pointer() that returns the new pointer (or
 * NULL) instead of the old one, so the caller frees what readers now
 * see, or that does not store the new one. */
static void test_replace_returns_old(void)
{
	struct obj *old = srcu_replace_pointer(head, &o2, 1);

	CHECK(old == &o1);
	CHECK(srcu_access_pointer(head) == &o2);
	old = srcu_replace_pointer(head, NULL, true);
	CHECK(old == &o2);
	CHECK(srcu_access_pointer(head) == NULL);
	old = srcu_replace_pointer(head, &o1, 1);
	CHECK(old == NULL);
	CHECK(head == &o1);
}

/* Bug caught: an argument evaluated twice (p or sp, a side effect done
 * twice), or the condition evaluated where it must not be (outside the
 * checking build, c is type-checked only: no cost, no side effect). */
static void test_evaluation(void)
{
	int idx = srcu_read_lock(&ptr_dom);
	struct obj *p;

	sp_evals = c_evals = p_evals = 0;
	p = srcu_dereference(*head_counted(), dom_counted());
	CHECK(p == &o1);
	CHECK_EQ(p_evals, 1);
	CHECK_EQ(sp_evals, 1);
	p = srcu_dereference_check(*head_counted(), dom_counted(), cond_counted(false));
	CHECK(p == &o1);
	CHECK_EQ(p_evals, 2);
	CHECK_EQ(sp_evals, 2);
	srcu_read_unlock(&ptr_dom, idx);
	p = srcu_dereference_protected(*head_counted(), cond_counted(true));
	CHECK(p == &o1);
	p = srcu_replace_pointer(*head_counted(), &o2, cond_counted(true));
	CHECK(p == &o1);
	CHECK(head == &o2);
	CHECK_EQ(p_evals, 4);
#ifdef SRCU_DEBUG
	CHECK_EQ(c_evals, 3);
#else
	CHECK_EQ(c_evals, 0);
#endif
	head = &o1;
}

/* Publication under load: an updater builds objects, publishes each with
 * srcu_replace_pointer(), waits for a grace period and poisons the old
 * one; readers follow the pointer and must never see an object before its
 * fields were written, nor a poisoned one.  Bug caught: a replace that
 * returns the wrong old pointer or publishes before its stores (poison or
 * zero seen), a dereference or grace period that does not protect the
 * object it returned.  (On x86 the hardware orders stores anyway: there it
 * catches the compiler's reordering and the grace-period bugs; on aarch64
 * and POWER, the publication's too.) */
#define POISON (-1L)
static struct obj *pub;
static int stop;
static long bad_reads, good_reads;

/* Sections that found an object: the updater stops the readers only
 * after some (on a loaded machine they may not run at all during its
 * 2000 grace periods). */
static long reads_seen;

static void *reader(void *arg)
{
	long bad = 0, good = 0;

	(void)arg;
	while (!flag_get(&stop)) {
		int idx = srcu_read_lock(&ptr_dom);
		struct obj *p = srcu_dereference(pub, &ptr_dom);

		if (p) {
			long a = p->a, b = p->b;

			if (a <= 0 || b != a * 10)
				bad++;
			else
				good++;
			__atomic_add_fetch(&reads_seen, 1, __ATOMIC_RELAXED);
		}
		srcu_read_unlock(&ptr_dom, idx);
	}
	__atomic_add_fetch(&bad_reads, bad, __ATOMIC_RELAXED);
	__atomic_add_fetch(&good_reads, good, __ATOMIC_RELAXED);
	return NULL;
}

static void test_publication(void)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_t r[2];
	long i;

	for (i = 0; i < 2; i++)
		r[i] = spawn(reader, NULL);
	for (i = 1; i <= 2000; i++) {
		struct obj *n = malloc(sizeof(*n)), *old;

		REQUIRE(n);
		n->a = i;
		n->b = i * 10;
		pthread_mutex_lock(&lock);
		old = srcu_replace_pointer(pub, n, 1);
		pthread_mutex_unlock(&lock);
		CHECK(old == NULL || old->a == i - 1);
		synchronize_srcu(&ptr_dom);
		if (old) {
			old->a = POISON;
			old->b = POISON;
			free(old);
		}
	}
	while (__atomic_load_n(&reads_seen, __ATOMIC_RELAXED) < 1000)
		sleep_us(100);   /* the last object stays published meanwhile */
	flag_set(&stop);
	for (i = 0; i < 2; i++)
		join(r[i]);
	free(srcu_replace_pointer(pub, NULL, 1));
	CHECK_EQ(bad_reads, 0);
	CHECK_LT(0, good_reads);
}

#ifdef SRCU_DEBUG
/* ---- The checking build: each misuse aborts naming the call site ----
 *
 * The legal uses (inside a section, c true outside one) ran above, in
 * this build too, without aborting.  Each function below records the line
 * of its load (SITE(), the line before it); a dry run records it without
 * loading, so that the parent knows what the child must print. */

static struct obj *volatile sink;
static bool dry;
static int outside_line, other_line, ended_line, check_line, protected_line, replace_line,
	thread_line;
#define SITE(v) ((v) = __LINE__ + 1)

static void deref_outside(void)
{
	SITE(outside_line);
	if (!dry) sink = srcu_dereference(head, &ptr_dom);
}

static void deref_in_other_domain(void)
{
	int idx = srcu_read_lock(&other_dom);

	SITE(other_line);
	if (!dry) sink = srcu_dereference(head, &ptr_dom);
	srcu_read_unlock(&other_dom, idx);
}

static void deref_after_section(void)
{
	int idx = srcu_read_lock(&ptr_dom);

	srcu_read_unlock(&ptr_dom, idx);
	SITE(ended_line);
	if (!dry) sink = srcu_dereference(head, &ptr_dom);
}

static void check_false_outside(void)
{
	bool update_lock_held = false;

	SITE(check_line);
	if (!dry) sink = srcu_dereference_check(head, &ptr_dom, update_lock_held);
}

static void protected_false(void)
{
	bool update_lock_held = false;

	SITE(protected_line);
	if (!dry) sink = srcu_dereference_protected(head, update_lock_held);
}

static void replace_false(void)
{
	bool update_lock_held = false;

	SITE(replace_line);
	if (!dry) sink = srcu_replace_pointer(head, &o2, update_lock_held);
}

static void *deref_thread(void *arg)
{
	(void)arg;
	SITE(thread_line);
	if (!dry) sink = srcu_dereference(head, &ptr_dom);
	return NULL;
}

/* The main thread's section does not cover another thread's loads. */
static void deref_in_thread_while_main_inside(void)
{
	int idx = srcu_read_lock(&ptr_dom);

	join(spawn(deref_thread, NULL));
	srcu_read_unlock(&ptr_dom, idx);
}

static char sites[8][64];

static const char *at(int i, int line)
{
	snprintf(sites[i], sizeof(sites[i]), "test_pointers.c:%d ", line);
	return sites[i];
}

static void test_debug_deaths(void)
{
	dry = true;
	deref_outside();
	deref_in_other_domain();
	deref_after_section();
	check_false_outside();
	protected_false();
	replace_false();
	deref_thread(NULL);
	dry = false;

	/* Bug caught: no check at all, or a report without the call site,
	 * the expression or the domain. */
	CHECK(dies_saying(deref_outside, "srcu_dereference(head)", at(0, outside_line),
			  "outside any section of domain 'ptr_dom'", NULL));
	/* Bug caught: a check that any section, of any domain, satisfies. */
	CHECK(dies_saying(deref_in_other_domain, at(1, other_line), "domain 'ptr_dom'", NULL));
	/* Bug caught: a check that remembers a section after its unlock. */
	CHECK(dies_saying(deref_after_section, at(2, ended_line), "domain 'ptr_dom'", NULL));
	/* Bug caught: _check() that ignores a false c outside a section (or
	 * reports without naming the condition). */
	CHECK(dies_saying(check_false_outside, "srcu_dereference_check(head",
			  "update_lock_held", at(3, check_line), "'ptr_dom'", NULL));
	/* Bug caught: _protected() and replace that never check c. */
	CHECK(dies_saying(protected_false, "srcu_dereference_protected(head, update_lock_held)",
			  at(4, protected_line), "condition is false", NULL));
	CHECK(dies_saying(replace_false, "srcu_replace_pointer(head, update_lock_held)",
			  at(5, replace_line), NULL));
	/* Bug caught: a check that is per process, not per thread. */
	CHECK(dies_saying(deref_in_thread_while_main_inside, at(6, thread_line),
			  "outside any section of domain 'ptr_dom'", NULL));
}
#endif

int main(void)
{
	watchdog(60);
	test_values();
	test_replace_returns_old();
	test_evaluation();
	test_publication();
#ifdef SRCU_DEBUG
	test_debug_deaths();
#endif
	return check_report("test_pointers");
}
