/* A producer and a consumer thread sharing a bounded buffer under one mutex and two
 * condition variables. Built with -DFORGET_UNLOCK, the producer forgets to unlock after its
 * first item: the consumer and then the producer itself wait for the mutex forever. */
#include <pthread.h>
#include <stdio.h>
#include "klee/klee.h"

#define SIZE 2
#define ITEMS 4
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static int buffer[SIZE], count, head, tail;
static int items[ITEMS];

static void *produce(void *arg) {
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&lock);
    while (count == SIZE)
      pthread_cond_wait(&not_full, &lock);
    buffer[tail] = items[i];
    tail = (tail + 1) % SIZE;
    count++;
    pthread_cond_signal(&not_empty);
#ifdef FORGET_UNLOCK
    if (i == 0)
      continue;
#endif
    pthread_mutex_unlock(&lock);
  }
  return 0;
}

static void *consume(void *arg) {
  long sum = 0;
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&lock);
    while (count == 0)
      pthread_cond_wait(&not_empty, &lock);
    sum += buffer[head];
    head = (head + 1) % SIZE;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&lock);
  }
  return (void *)sum;
}

int main(void) {
  klee_make_symbolic(items, sizeof items, "items");
  pthread_t producer, consumer;
  void *sum;
  pthread_create(&producer, 0, produce, 0);
  pthread_create(&consumer, 0, consume, 0);
  pthread_join(producer, 0);
  pthread_join(consumer, &sum);
  if ((long)sum == 10)
    printf("sum ten\n");
  else
    printf("sum other\n");
  return 0;
}
