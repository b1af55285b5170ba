/*
 * list_del: the article's canonical use.  Readers walk a linked list
 * inside SRCU read-side critical sections (and may sleep there); the
 * updater unlinks a node, waits for a grace period, then frees it.
 *
 *   build/examples/list_del
 */
#include <srcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct node {
	int key;
	struct node *next;
};

static DEFINE_SRCU(list_srcu);
static struct node *list_head;
static int stop;

/* Reader: may sleep inside the section, as SRCU allows. */
static void *reader(void *arg)
{
	long found = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int idx = srcu_read_lock(&list_srcu);
		for (struct node *p = srcu_dereference(list_head, &list_srcu); p;
		     p = srcu_dereference(p->next, &list_srcu))
			found += p->key >= 0;
		usleep(100);                       /* sleeping reader */
		srcu_read_unlock(&list_srcu, idx);
	}
	return (void *)found;
}

/* Updater: unlink the first node, wait for readers, free it. */
static void delete_first(void)
{
	struct node *victim = list_head;

	if (!victim)
		return;
	srcu_assign_pointer(list_head, victim->next);  /* list_del_rcu() */
	synchronize_srcu(&list_srcu);                  /* wait for readers */
	free(victim);                                  /* nobody can see it */
}

int main(void)
{
	pthread_t t[2];
	void *found;

	for (int i = 0; i < 100; i++) {
		struct node *n = malloc(sizeof(*n));
		n->key = i;
		n->next = list_head;
		srcu_assign_pointer(list_head, n);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < 100; i++)
		delete_first();
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &found);
	printf("deleted 100 nodes in %lu grace periods; list is %s\n",
	       srcu_batches_completed(&list_srcu), list_head ? "not empty" : "empty");
	return list_head != NULL;
}
