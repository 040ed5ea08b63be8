/* Thread calls whose results the model must give as Linux gives them; the test compares
 * this program's output under symex with its native output. Only the main thread prints,
 * after joining, so the output does not depend on how the threads interleave. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t slots;
static int counter, ready, initialised, errno_seen[3];

static pthread_key_t own;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t all_here;
static int table_reads, specific_seen[3], serial_threads;

static void initialise(void) { initialised++; }

static void *worker(void *arg) {
  long id = (long)arg;
  pthread_once(&once, initialise);
  errno = 100 + (int)id; /* each thread has its own errno */
  pthread_setspecific(own, (void *)(id + 1)); /* and its own value of a key */
  if (pthread_barrier_wait(&all_here) != 0)
    serial_threads++;
  pthread_rwlock_rdlock(&table_lock);
  table_reads++;
  pthread_rwlock_unlock(&table_lock);
  specific_seen[id] = (int)(long)pthread_getspecific(own);
  sem_wait(&slots);
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&lock);
    counter++;
    pthread_mutex_unlock(&lock);
  }
  sem_post(&slots);
  pthread_mutex_lock(&lock);
  ready++;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  sched_yield();
  errno_seen[id] = errno;
  return (void *)(id * 10);
}

int main(void) {
  pthread_t threads[3];
  sem_init(&slots, 0, 2);
  pthread_key_create(&own, 0);
  pthread_barrier_init(&all_here, 0, 3);
  errno = 7;
  for (long i = 0; i < 3; i++)
    pthread_create(&threads[i], 0, worker, (void *)i);
  pthread_mutex_lock(&lock);
  while (ready < 3)
    pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  long sum = 0;
  for (int i = 0; i < 3; i++) {
    void *result;
    pthread_join(threads[i], &result);
    sum += (long)result;
  }
  printf("counter %d ready %d once %d sum %ld\n", counter, ready, initialised, sum);
  printf("errno main %d threads %d %d %d\n", errno, errno_seen[0], errno_seen[1], errno_seen[2]);
  printf("join self %d\n", pthread_join(pthread_self(), 0));
  printf("specific %d %d %d main %ld serial %d reads %d\n", specific_seen[0], specific_seen[1],
         specific_seen[2], (long)pthread_getspecific(own), serial_threads, table_reads);
  pthread_rwlock_wrlock(&table_lock);
  printf("trywrlock busy %d tryrdlock busy %d\n", pthread_rwlock_trywrlock(&table_lock) != 0,
         pthread_rwlock_tryrdlock(&table_lock) != 0);
  pthread_rwlock_unlock(&table_lock);
  int read_ok = pthread_rwlock_tryrdlock(&table_lock);
  int read_twice = pthread_rwlock_tryrdlock(&table_lock);
  int write_busy = pthread_rwlock_trywrlock(&table_lock) != 0;
  printf("readers %d %d writer busy %d\n", read_ok, read_twice, write_busy);

  pthread_mutex_t recursive;
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&recursive, &attributes);
  /* one call per statement: compilers evaluate printf's arguments in different orders */
  int r1 = pthread_mutex_lock(&recursive);
  int r2 = pthread_mutex_lock(&recursive);
  int r3 = pthread_mutex_unlock(&recursive);
  int r4 = pthread_mutex_unlock(&recursive);
  int r5 = pthread_mutex_unlock(&recursive);
  printf("recursive %d %d %d %d %d\n", r1, r2, r3, r4, r5);
  pthread_mutex_t checked;
  pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&checked, &attributes);
  r1 = pthread_mutex_unlock(&checked);
  r2 = pthread_mutex_lock(&checked);
  r3 = pthread_mutex_lock(&checked);
  r4 = pthread_mutex_unlock(&checked);
  printf("errorcheck %d %d %d %d\n", r1, r2, r3, r4);
  pthread_mutex_lock(&lock);
  printf("trylock busy %d\n", pthread_mutex_trylock(&lock));
  pthread_mutex_unlock(&lock);
  int value;
  sem_getvalue(&slots, &value);
  r1 = sem_trywait(&slots);
  r2 = sem_trywait(&slots);
  r3 = sem_trywait(&slots);
  printf("semaphore %d trywait %d %d %d errno %d\n", value, r1, r2, r3, errno);
  return 0;
}
