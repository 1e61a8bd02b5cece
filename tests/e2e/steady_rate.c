/* steady_rate.c -- exactly RATE allocations (each freed at once) a second
 * for SECONDS (default 1000 and 60): every 10 ms, on absolute sleeps, it
 * makes the allocations due by then, so a late wake-up catches up and the
 * rate over any second stays RATE within a tick's worth.  The known rate
 * check_rates.py holds memtop's reported rates to. */
#include <stdlib.h>
#include <time.h>

#define TICK_NS 10000000L

static double since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void tick(struct timespec *next)
{
    next->tv_nsec += TICK_NS;
    if (next->tv_nsec >= 1000000000L) {
        next->tv_sec++;
        next->tv_nsec -= 1000000000L;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

int main(int argc, char **argv)
{
    double rate = argc > 1 ? atof(argv[1]) : 1000, secs = argc > 2 ? atof(argv[2]) : 60;
    struct timespec t0, next;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    next = t0;
    long done = 0;
    for (double el; (el = since(&t0)) < secs; tick(&next))
        for (long due = (long)(el * rate); done < due; done++) {
            void *volatile p = malloc(64);
            free(p);
        }
    return 0;
}
