/*
 * test_readers: readers may sleep, block on locks and I/O, migrate between
 * CPUs, nest deeply, overlap, and hold several domains at once; a grace
 * period must wait for each such section that began before it.
 *
 * Each case runs a reader that enters its section(s), lets a synchronize
 * start, stays inside for a while, raises `ending` just before its final
 * unlock, and ends.  Bug caught in every case: synchronize_srcu() that
 * returns while the reader is still inside (it would see ending == 0).
 */
#include "check.h"

#include <sched.h>

struct reader_case {
	const char *what;
	void (*body)(struct srcu_struct *sp, int *ending);
};

struct run {
	struct srcu_struct *sp;
	const struct reader_case *c;
	int entered, ending, expedited;
};

static int *entered_flag;   /* set by bodies once inside (see enter()) */

static void entered(void)
{
	flag_set(entered_flag);
	sleep_ms(30);  /* let the synchronize begin while we are inside */
}

static void body_sleep(struct srcu_struct *sp, int *ending)
{
	int idx = srcu_read_lock(sp);

	entered();
	sleep_ms(150);
	flag_set(ending);
	srcu_read_unlock(sp, idx);
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int helper_has_lock;

static void *hold_lock_a_while(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	flag_set(&helper_has_lock);
	sleep_ms(150);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void body_block_on_mutex(struct srcu_struct *sp, int *ending)
{
	pthread_t t = spawn(hold_lock_a_while, NULL);
	int idx;

	flag_wait(&helper_has_lock);
	idx = srcu_read_lock(sp);
	entered();
	pthread_mutex_lock(&held);       /* blocks until the helper lets go */
	pthread_mutex_unlock(&held);
	join(t);
	flag_set(ending);
	srcu_read_unlock(sp, idx);
}

static int pipe_fds[2];

static void *write_later(void *arg)
{
	(void)arg;
	sleep_ms(150);
	REQUIRE(write(pipe_fds[1], "x", 1) == 1);
	return NULL;
}

static void body_block_on_io(struct srcu_struct *sp, int *ending)
{
	char c;
	int idx;
	pthread_t t;

	REQUIRE(pipe(pipe_fds) == 0);
	idx = srcu_read_lock(sp);
	entered();
	t = spawn(write_later, NULL);
	REQUIRE(read(pipe_fds[0], &c, 1) == 1);   /* blocking read */
	join(t);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	flag_set(ending);
	srcu_read_unlock(sp, idx);
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void body_migrate(struct srcu_struct *sp, int *ending)
{
	int idx, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	pin_to(0);
	idx = srcu_read_lock(sp);
	entered();
	for (int i = 1; i < 6; i++) {           /* hop CPUs inside the section */
		pin_to(i % ncpu);
		sleep_ms(20);
	}
	flag_set(ending);
	srcu_read_unlock(sp, idx);
}

#define DEPTH 1000
static void body_nest_deep(struct srcu_struct *sp, int *ending)
{
	static int idx[DEPTH];
	int i;

	for (i = 0; i < DEPTH; i++)
		idx[i] = srcu_read_lock(sp);
	entered();
	for (i = DEPTH - 1; i > 0; i--) {       /* all but the outermost */
		srcu_read_unlock(sp, idx[i]);
		if (i % 100 == 0)
			sleep_ms(10);
	}
	sleep_ms(50);
	flag_set(ending);
	srcu_read_unlock(sp, idx[0]);
}

static void body_overlap(struct srcu_struct *sp, int *ending)
{
	int a = srcu_read_lock(sp), b = srcu_read_lock(sp);

	entered();
	srcu_read_unlock(sp, a);                /* a ends first: b still holds */
	sleep_ms(150);
	flag_set(ending);
	srcu_read_unlock(sp, b);
}

static void *run_reader(void *arg)
{
	struct run *r = arg;

	r->c->body(r->sp, &r->ending);
	return NULL;
}

static void check_case(const struct reader_case *c, bool expedited)
{
	struct srcu_struct s;
	struct run r = { .sp = &s, .c = c };
	pthread_t t;

	REQUIRE(init_srcu_struct(&s) == 0);
	srcu_set_name(&s, c->what);
	entered_flag = &r.entered;
	t = spawn(run_reader, &r);
	flag_wait(&r.entered);
	if (expedited)
		synchronize_srcu_expedited(&s);
	else
		synchronize_srcu(&s);
	if (!flag_get(&r.ending))
		fprintf(stderr, "case %s (%s): grace period ended with the reader inside\n",
			c->what, expedited ? "expedited" : "normal");
	CHECK(flag_get(&r.ending));
	join(t);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* Several domains held at once by one thread: each synchronize waits for
 * its own domain's section only.  Bug caught: counts of one domain landing
 * in another's slot, or a grace period that ignores a nested domain. */
static struct srcu_struct dom[3];
static int dom_ending[3], dom_entered;

static void *hold_three(void *arg)
{
	int idx[3];

	(void)arg;
	for (int i = 0; i < 3; i++)
		idx[i] = srcu_read_lock(&dom[i]);
	flag_set(&dom_entered);
	for (int i = 0; i < 3; i++) {
		sleep_ms(60);
		flag_set(&dom_ending[i]);
		srcu_read_unlock(&dom[i], idx[i]);
	}
	return NULL;
}

static void test_many_domains_at_once(void)
{
	pthread_t t;

	for (int i = 0; i < 3; i++)
		REQUIRE(init_srcu_struct(&dom[i]) == 0);
	t = spawn(hold_three, NULL);
	flag_wait(&dom_entered);
	synchronize_srcu(&dom[1]);
	CHECK(flag_get(&dom_ending[1]));
	CHECK(!flag_get(&dom_ending[2]));       /* did not wait for dom[2] */
	synchronize_srcu(&dom[2]);
	CHECK(flag_get(&dom_ending[2]));
	join(t);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(cleanup_srcu_struct(&dom[i]), 0);
}

static const struct reader_case cases[] = {
	{ "sleep", body_sleep },
	{ "block-on-mutex", body_block_on_mutex },
	{ "block-on-io", body_block_on_io },
	{ "migrate", body_migrate },
	{ "nest-1000", body_nest_deep },
	{ "overlap", body_overlap },
};

int main(void)
{
	watchdog(100);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_case(&cases[i], false);
		check_case(&cases[i], true);
	}
	test_many_domains_at_once();
	return check_report("test_readers");
}
