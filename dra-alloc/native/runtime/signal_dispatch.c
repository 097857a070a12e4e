/*
 * The C half of java.lang's signal handling (sun.misc.Signal, shutdown hooks on SIGINT/SIGTERM)
 * in a native image: the handler only counts the signal and posts a semaphore (all a signal
 * handler may safely do); the image's dispatcher thread waits on the semaphore and asks which
 * signal is pending. One process, one table: open() refuses a second user.
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>

static atomic_int pending[NSIG];
static sem_t posted;
static atomic_int opened;

int cSunMiscSignal_open(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&opened, &expected, 1)) {
        return 1;
    }
    for (int i = 0; i < NSIG; i++) {
        atomic_store(&pending[i], 0);
    }
    if (sem_init(&posted, 0, 0) != 0) {
        atomic_store(&opened, 0);
        return -1;
    }
    return 0;
}

int cSunMiscSignal_close(void) {
    if (sem_destroy(&posted) != 0) {
        return -1;
    }
    atomic_store(&opened, 0);
    return 0;
}

int cSunMiscSignal_awaitSemaphore(void) {
    while (sem_wait(&posted) != 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

int cSunMiscSignal_signalSemaphore(void) {
    return sem_post(&posted);
}

int cSunMiscSignal_signalRangeCheck(int sig) {
    return sig > 0 && sig < NSIG;
}

/* A pending signal's number, counted off once, or -1 when none is pending. */
int cSunMiscSignal_checkPendingSignal(void) {
    for (int sig = 1; sig < NSIG; sig++) {
        int count = atomic_load(&pending[sig]);
        while (count > 0) {
            if (atomic_compare_exchange_weak(&pending[sig], &count, count - 1)) {
                return sig;
            }
        }
    }
    return -1;
}

static void count_signal(int sig, siginfo_t *info, void *context) {
    (void) info;
    (void) context;
    if (cSunMiscSignal_signalRangeCheck(sig)) {
        int saved = errno;
        atomic_fetch_add(&pending[sig], 1);
        sem_post(&posted);
        errno = saved;
    }
}

void *cSunMiscSignal_signalHandlerFunctionPointer(void) {
    return (void *) count_signal;
}
