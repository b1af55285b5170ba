/*
 * test_table1: the scenario of Table 1 of McKenney's "Sleepable RCU",
 * row by row, with one thread per CPU column:
 *
 *   row | CPU 0               | CPU 1                 | CPU 2              | CPU 3
 *    1  | i0 = lock(&s1)      |                       |                    | i3 = lock(&s2)
 *    2  |                     | synchronize(&s1) enter|                    |
 *    3  |                     |                       | i2 = lock(&s1)     |
 *    4  | unlock(&s1, i0)     |                       |                    |
 *    5  |                     | synchronize(&s1) exit |                    |
 *    6  |                     |                       | unlock(&s1, i2)    |
 *
 * Bugs caught: synchronize_srcu() returning before CPU 0's section ends
 * (checked at row 4), and one that also waits for CPU 2's later section
 * or CPU 3's section of another domain (row 5 must come while both are
 * still inside; they leave only after it, or after a 10 s deadline).
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

static struct srcu_struct s1, s2;
static int row;            /* the last row completed */
static int sync_returned;

static void wait_row(int r)
{
	while (__atomic_load_n(&row, __ATOMIC_SEQ_CST) < r)
		sleep_us(50);
}

static void done_row(int r)
{
	__atomic_store_n(&row, r, __ATOMIC_SEQ_CST);
}

/* Wait (at most 10 s) for synchronize_srcu() to return; false if it did not. */
static bool sync_returns(void)
{
	long long deadline = now_ns() + 10000000000LL;

	while (!flag_get(&sync_returned) && now_ns() < deadline)
		sleep_us(100);
	return flag_get(&sync_returned);
}

static void *cpu0(void *arg)
{
	int i0 = srcu_read_lock(&s1);                 /* row 1 */

	(void)arg;
	done_row(1);
	wait_row(3);
	sleep_ms(100);                                /* give a buggy sync time to return */
	CHECK(!flag_get(&sync_returned));             /* must still be waiting for us */
	done_row(4);                                  /* just before, so no false alarm */
	srcu_read_unlock(&s1, i0);                    /* row 4 */
	return NULL;
}

static void *cpu1(void *arg)
{
	(void)arg;
	wait_row(1);
	done_row(2);                                  /* row 2: enter */
	synchronize_srcu(&s1);
	flag_set(&sync_returned);                     /* row 5: exit */
	CHECK(__atomic_load_n(&row, __ATOMIC_SEQ_CST) >= 4);
	return NULL;
}

static void *cpu2(void *arg)
{
	int i2;

	(void)arg;
	wait_row(2);
	/* Row 3 follows row 2: wait until synchronize_srcu() has entered its
	 * wait for pre-existing readers (the second scan of Tree SRCU). */
	while ((__atomic_load_n(&srcu__dom_area(&s1)->gp_seq, __ATOMIC_SEQ_CST) & 3) != 2)
		sleep_us(50);
	i2 = srcu_read_lock(&s1);                     /* row 3 */
	done_row(3);
	CHECK(sync_returns());                        /* row 5 happens while we hold */
	srcu_read_unlock(&s1, i2);                    /* row 6 */
	return NULL;
}

static void *cpu3(void *arg)
{
	int i3 = srcu_read_lock(&s2);                 /* row 1 */

	(void)arg;
	CHECK(sync_returns());                        /* s2 does not hold up s1 */
	srcu_read_unlock(&s2, i3);
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	watchdog(60);
	REQUIRE(init_srcu_struct(&s1) == 0);
	REQUIRE(init_srcu_struct(&s2) == 0);
	t[3] = spawn(cpu3, NULL);
	t[0] = spawn(cpu0, NULL);
	t[1] = spawn(cpu1, NULL);
	t[2] = spawn(cpu2, NULL);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	CHECK(flag_get(&sync_returned));
	CHECK_EQ(cleanup_srcu_struct(&s1), 0);
	CHECK_EQ(cleanup_srcu_struct(&s2), 0);
	return check_report("test_table1");
}
