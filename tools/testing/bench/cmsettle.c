// SPDX-License-Identifier: GPL-2.0
/*
 * cmsettle.so - preloaded into cmtime's client and server by guest-bench.sh.
 *
 * cmtime runs its passes (a warm-up of one connection, the QPs pass, the
 * no-QPs pass) in one process, each right after the other.  Work that
 * one pass leaves behind then runs inside the next pass's timed steps,
 * earlier or later from run to run: at 10,000 connections under icount
 * one resolve step of the no-QPs pass took about 0.35 s longer than
 * usual in every round of stock and in one of three of ours.  What that
 * work is has not been shown (timewait records expiring, or RCU and
 * deferred frees after 10,000 destroys).
 *
 * This makes the client pause at the end of each pass, in the
 * rdma_destroy_id() of the pass's last id, whose count among cmtime's ids
 * is in $CMSETTLE_AT (blank-separated: 1, 1 + N and 1 + 2N for N
 * connections), before it starts the next pass's clock; its server waits
 * for it meanwhile.  The pause lasts at least $CMSETTLE_MS milliseconds
 * and then until a quarter of a second passes with at most one tick of
 * CPU time used in the whole guest (/proc/stat), for at most
 * SETTLE_MAX_MS.  Under icount an idle guest costs no instructions and
 * its clock runs on to the next timer, so the pause is free.  The
 * leftovers then run outside every timed step but "destroy id" (which
 * includes the pause), and after the last pass while a profiler that
 * runs as long as the client still records them.  Each pause is reported
 * on stderr with the CPU ticks used during it: the work it kept out of
 * the next pass, which belongs to the module's cost all the same, and
 * the server's destroying of its own ids, which runs meanwhile.
 *
 * It is preloaded into cmtime's server too, for its sched_yield(): both
 * main threads wait for the end of each step in a loop of sched_yield()
 * calls.  On one vCPU a call that finds other work runnable switches to
 * it and comes back when the scheduler next picks the waiting thread, so
 * the waiting threads take turns with the threads that do the step's
 * work.  Under icount those turns are counted as work, and how many
 * there are varies from run to run: at 10,000 connections with QPs the
 * rounds of one module spread by 12 %, with sched_yield() in 5 % of all
 * samples.  With $CMSETTLE_YIELD_US above 0 a yield sleeps that many
 * microseconds instead (with 1000 the rounds spread by 0.1-3.7 % in two
 * runs).  The waiting thread then costs one wake-up per period, in
 * proportion to the step's length, and sees the step's end up to a
 * period (plus the 50 us timer slack) late, half of one on average, with
 * the guest idle meanwhile: about 0.5 ms per waited step.  The number of
 * such sleeps is reported on stderr at exit.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#define SETTLE_STEP_MS	250
#define SETTLE_MAX_MS	10000

typedef int destroy_fn(struct rdma_cm_id *);
typedef int yield_fn(void);

/* The functions this library stands in front of, found at load time. */
static destroy_fn *real_destroy;
static yield_fn *real_yield;

/*
 * The environment, read once at load time: $CMSETTLE_MS, $CMSETTLE_AT
 * and $CMSETTLE_YIELD_US; and the sleeps the last one made.
 */
static long settle_ms;
static const char *settle_at;
static long yield_us;
static unsigned long yield_sleeps;

/* Whether @n is one of the blank-separated counts in @list. */
static int listed(const char *list, unsigned long n)
{
	char *end;

	while (list && *list) {
		if (strtoul(list, &end, 10) == n && end != list)
			return 1;
		if (end == list)
			return 0;
		list = end + strspn(end, " ");
	}
	return 0;
}

/*
 * The guest's CPU time but idle, iowait and steal (time the vCPU did not
 * run), in USER_HZ ticks; -1 on error.  guest-bench.sh's cpu_ticks sums
 * the same fields.
 */
static long long busy_ticks(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	return v[0] + v[1] + v[2] + v[5] + v[6];
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void settle(unsigned long count, long least_ms)
{
	long long first = busy_ticks(), before, now;
	long ms = least_ms;
	int quiet;

	sleep_ms(least_ms);
	now = busy_ticks();
	do {
		before = now;
		sleep_ms(SETTLE_STEP_MS);
		ms += SETTLE_STEP_MS;
		now = busy_ticks();
		quiet = before < 0 || now < 0 || now - before <= 1;
	} while (!quiet && ms < SETTLE_MAX_MS);
	fprintf(stderr, "cmsettle: id %lu: paused %ld ms, %lld busy ticks%s\n",
		count, ms, first >= 0 && now >= 0 ? now - first : -1LL,
		quiet ? "" : " (never quiet)");
}

/*
 * cmtime destroys its ids on its main thread only, so the count needs no
 * lock.  Only ids of cmtime's port space count: librdmacm's first
 * rdma_getaddrinfo() creates and destroys a probe id of its own (RDMA_PS_IB)
 * through the same entry point.
 */
int rdma_destroy_id(struct rdma_cm_id *id)
{
	static unsigned long count;
	int counted = id && id->ps == RDMA_PS_TCP;
	int ret;

	ret = real_destroy(id);
	if (counted) {
		count++;
		if (settle_ms > 0 && listed(settle_at, count))
			settle(count, settle_ms);
	}
	return ret;
}

static void __attribute__((constructor)) cmsettle_init(void)
{
	const char *ms = getenv("CMSETTLE_MS");
	const char *us = getenv("CMSETTLE_YIELD_US");

	real_destroy = (destroy_fn *)dlsym(RTLD_NEXT, "rdma_destroy_id");
	real_yield = (yield_fn *)dlsym(RTLD_NEXT, "sched_yield");
	if (!real_destroy || !real_yield) {
		fprintf(stderr, "cmsettle: rdma_destroy_id or sched_yield not found\n");
		abort();
	}

	settle_ms = ms ? strtol(ms, NULL, 10) : 0;
	settle_at = getenv("CMSETTLE_AT");
	yield_us = us ? strtol(us, NULL, 10) : 0;
	if (yield_us < 0)
		yield_us = 0;
}

static void __attribute__((destructor)) cmsettle_fini(void)
{
	if (yield_us > 0)
		fprintf(stderr, "cmsettle: sched_yield slept %lu times for %ld us\n",
			__atomic_load_n(&yield_sleeps, __ATOMIC_RELAXED), yield_us);
}

int sched_yield(void)
{
	struct timespec ts = { yield_us / 1000000, yield_us % 1000000 * 1000 };

	if (yield_us > 0) {
		__atomic_fetch_add(&yield_sleeps, 1, __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
		return 0;
	}
	return real_yield();
}
