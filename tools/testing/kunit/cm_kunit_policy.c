// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_policy: the per-port CM policy
 *
 * The arithmetic of "The CM policy of a port" in cm.c on its own (caps,
 * the two schedules, parsing), then what each retried message advertises
 * and waits for under it, driven through the fake transport of
 * cm_kunit_fake.c: with the defaults exactly the stock values, under caps
 * the capped ones, and the backoff schedule resending from the CM.
 */

#include <kunit/test.h>

/* The paths' packet lifetime (FK_LIFE) in ms, as the REQ's wait counts it. */
#define PK_LIFE_MS	(1 << (FK_LIFE - 8))

static const int pk_bases[] = { 1, 3, 64, 1000, 1024, 4096, 36864, 65536,
				1 << 23, INT_MAX / 2, INT_MAX };
static const u32 pk_rnds[] = { 0, 1, 0x7fffffff, 0x80000000, 0xfffffffe,
			       U32_MAX };
static const u32 pk_jitters[] = { 0, 1, 25, 50, 100 };
static const u32 pk_maxes[] = { 1, 64, 200, 65536, CM_BACKOFF_MAX_MS };

/* The backoff wait before jitter: doubled, capped, never below @base. */
static u64 pk_nominal(int base, unsigned int attempt, u32 max_ms)
{
	u64 wait = base;
	unsigned int i;

	for (i = 0; i < attempt && wait < max_ms; i++)
		wait *= 2;
	return max_t(u64, min_t(u64, wait, max_ms), base);
}

static struct cm_policy pk_backoff(u32 max_ms, u32 jitter)
{
	struct cm_policy pol = cm_policy_default;

	pol.schedule = CM_SCHEDULE_BACKOFF;
	pol.backoff_max_ms = max_ms;
	pol.backoff_jitter = jitter;
	return pol;
}

/* ---- arithmetic ---- */

/* The defaults are the stock module's: fixed, and no bound at all. */
static void defaults_bound_nothing(struct kunit *test)
{
	const struct cm_policy *pol = &cm_policy_default;
	unsigned int t, r, i, a;

	KUNIT_EXPECT_EQ(test, pol->schedule, (u32)CM_SCHEDULE_FIXED);
	KUNIT_EXPECT_EQ(test, pol->max_retries, (u32)CM_RETRIES_MAX);
	KUNIT_EXPECT_EQ(test, pol->max_response_timeout, (u32)CM_TIMEOUT_MAX);
	for (t = 0; t <= 31; t++)
		KUNIT_EXPECT_EQ(test, cm_policy_timeout(pol, t), t);
	/* A SIDR_REQ's retries are not limited to the wire's 4 bits. */
	for (r = 0; r <= 255; r++)
		KUNIT_EXPECT_EQ(test, cm_policy_retries(pol, r), r);
	for (i = 0; i < ARRAY_SIZE(pk_bases); i++) {
		KUNIT_EXPECT_EQ(test, cm_policy_wait_cap(pol, pk_bases[i]),
				pk_bases[i]);
		for (a = 0; a < 40; a++)
			KUNIT_EXPECT_EQ(test,
					cm_policy_wait_ms(pol, pk_bases[i], a,
							  U32_MAX),
					pk_bases[i]);
	}
}

/* The fixed schedule waits the timeout every time, whatever the caps. */
static void fixed_schedule_waits_the_timeout(struct kunit *test)
{
	struct cm_policy pol = cm_policy_default;
	unsigned int i, a;

	pol.max_retries = 3;
	pol.max_response_timeout = 18;
	pol.backoff_max_ms = 1;
	pol.backoff_jitter = 100;
	for (i = 0; i < ARRAY_SIZE(pk_bases); i++)
		for (a = 0; a < 40; a++)
			KUNIT_EXPECT_EQ(test,
					cm_policy_wait_ms(&pol, pk_bases[i], a,
							  0x12345678),
					pk_bases[i]);
}

static void caps_cut_timeouts_and_retries(struct kunit *test)
{
	struct cm_policy pol = cm_policy_default;
	unsigned int t, r;

	pol.max_response_timeout = 18;
	pol.max_retries = 3;
	for (t = 0; t <= 31; t++)
		KUNIT_EXPECT_EQ(test, cm_policy_timeout(&pol, t), min(t, 18U));
	for (r = 0; r <= 255; r++)
		KUNIT_EXPECT_EQ(test, cm_policy_retries(&pol, r), min(r, 3U));
	/* A wait is cut to what the exponent stands for, 1024 ms ... */
	KUNIT_EXPECT_EQ(test, cm_policy_wait_cap(&pol, 2 * 256 + 4096), 1024);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_cap(&pol, INT_MAX), 1024);
	/* ... and a shorter one stays. */
	KUNIT_EXPECT_EQ(test, cm_policy_wait_cap(&pol, 100), 100);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_cap(&pol, 1024), 1024);
	/* Never below the timeout the capped REQ advertises. */
	for (t = 0; t <= 31; t++) {
		pol.max_response_timeout = t;
		KUNIT_EXPECT_GE(test,
				cm_policy_wait_cap(&pol,
						   2 * 256 + cm_iba_to_ms(20)),
				min(cm_iba_to_ms(cm_policy_timeout(&pol, 20)),
				    2 * 256 + cm_iba_to_ms(20)));
	}
	/* Zero retries: one send, no resend. */
	pol.max_retries = 0;
	KUNIT_EXPECT_EQ(test, cm_policy_retries(&pol, 15), 0);
}

/*
 * The example: 3 retries at timeout 18 give up on rdma_cm's REQ
 * (timeout 20, lifetime 16 on RoCE) within 5 s: 4 waits of 1024 ms.
 */
static void three_retries_at_18_end_within_5s(struct kunit *test)
{
	struct cm_policy pol = cm_policy_default;
	int wait = 2 * cm_iba_to_ms(16) + cm_iba_to_ms(20);
	int total;

	KUNIT_EXPECT_EQ(test, (1 + cm_policy_retries(&cm_policy_default, 15)) *
			cm_policy_wait_cap(&cm_policy_default, wait), 16 * 4608);
	pol.max_retries = 3;
	pol.max_response_timeout = 18;
	total = (1 + cm_policy_retries(&pol, 15)) *
		cm_policy_wait_cap(&pol, wait);
	KUNIT_EXPECT_EQ(test, total, 4096);
	KUNIT_EXPECT_LT(test, total, 5000);
}

/*
 * Every backoff wait for timeout @base with backoff_max_ms @max_ms and
 * backoff_jitter @jitter: never below the timeout; the nominal wait (with
 * a random number of 0) doubles from the timeout up to @max_ms; the
 * jitter adds at most @jitter percent of it.
 */
static void pk_check_backoff(struct kunit *test, int base, u32 max_ms,
			     u32 jitter)
{
	struct cm_policy pol = pk_backoff(max_ms, jitter);
	unsigned int r, a;

	for (a = 0; a < 40; a++) {
		u64 nom = pk_nominal(base, a, max_ms);
		u64 span = div_u64(nom * jitter, 100);

		for (r = 0; r < ARRAY_SIZE(pk_rnds); r++) {
			u64 w = cm_policy_wait_ms(&pol, base, a, pk_rnds[r]);

			KUNIT_EXPECT_GE(test, w, (u64)base);
			KUNIT_EXPECT_GE(test, w, min_t(u64, nom, INT_MAX));
			KUNIT_EXPECT_LE(test, w, min_t(u64, nom + span, INT_MAX));
		}
		KUNIT_EXPECT_EQ(test, (u64)cm_policy_wait_ms(&pol, base, a, 0),
				min_t(u64, nom, INT_MAX));
	}
}

/* Over timeouts, caps, jitters, random numbers and attempts. */
static void backoff_never_below_the_timeout_jitter_bounded(struct kunit *test)
{
	unsigned int n = ARRAY_SIZE(pk_bases) * ARRAY_SIZE(pk_maxes);
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ARRAY_SIZE(pk_jitters); j++)
			pk_check_backoff(test,
					 pk_bases[i % ARRAY_SIZE(pk_bases)],
					 pk_maxes[i / ARRAY_SIZE(pk_bases)],
					 pk_jitters[j]);
}

/* Worked examples of the schedule. */
static void backoff_examples(struct kunit *test)
{
	struct cm_policy none = pk_backoff(1000, 0);
	struct cm_policy half = pk_backoff(1000, 50);

	/* Without jitter: exactly the nominal wait. */
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 100, 0, U32_MAX), 100);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 100, 1, U32_MAX), 200);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 100, 3, U32_MAX), 800);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 100, 4, U32_MAX), 1000);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 100, 31, U32_MAX), 1000);
	/* A cap below the timeout: the timeout. */
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&none, 4096, 5, U32_MAX), 4096);
	/* The largest random number comes close to the whole span. */
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&half, 1000, 0, U32_MAX), 1499);
	KUNIT_EXPECT_EQ(test, cm_policy_wait_ms(&half, 1000, 0, 0x80000000),
			1250);
}

/* The sysfs files and module parameters take what they say, no more. */
static void policy_values_are_parsed_and_checked(struct kunit *test)
{
	static const struct {
		unsigned int knob;
		const char *buf;
		int ret;
		u32 val;
	} cases[] = {
		{ CM_KNOB_MAX_RETRIES, "3\n", 0, 3 },
		{ CM_KNOB_MAX_RETRIES, "0", 0, 0 },
		{ CM_KNOB_MAX_RETRIES, "15", 0, 15 },
		{ CM_KNOB_MAX_RETRIES, "16", -EINVAL },
		{ CM_KNOB_MAX_RETRIES, "-1", -EINVAL },
		{ CM_KNOB_MAX_RETRIES, "three", -EINVAL },
		{ CM_KNOB_MAX_RETRIES, "", -EINVAL },
		{ CM_KNOB_MAX_RESPONSE_TIMEOUT, "18\n", 0, 18 },
		{ CM_KNOB_MAX_RESPONSE_TIMEOUT, "31", 0, 31 },
		{ CM_KNOB_MAX_RESPONSE_TIMEOUT, "32", -EINVAL },
		{ CM_KNOB_SCHEDULE, "fixed\n", 0, CM_SCHEDULE_FIXED },
		{ CM_KNOB_SCHEDULE, "backoff", 0, CM_SCHEDULE_BACKOFF },
		{ CM_KNOB_SCHEDULE, "1", -EINVAL },
		{ CM_KNOB_SCHEDULE, "exponential", -EINVAL },
		{ CM_KNOB_BACKOFF_MAX_MS, "1", 0, 1 },
		{ CM_KNOB_BACKOFF_MAX_MS, "0", -EINVAL },
		{ CM_KNOB_BACKOFF_MAX_MS, "8388608", 0, 8388608 },
		{ CM_KNOB_BACKOFF_MAX_MS, "8388609", -EINVAL },
		{ CM_KNOB_BACKOFF_JITTER, "100", 0, 100 },
		{ CM_KNOB_BACKOFF_JITTER, "101", -EINVAL },
	};
	struct cm_policy pol = cm_policy_default;
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct cm_policy_knob *k = &cm_policy_knobs[cases[i].knob];
		u32 v = 0xdead;
		int ret = cm_policy_parse(k, "ib_cm_policy test", cases[i].buf,
					  &v);

		KUNIT_EXPECT_EQ_MSG(test, ret, cases[i].ret, "%s=\"%s\"",
				    k->name, cases[i].buf);
		if (!cases[i].ret)
			KUNIT_EXPECT_EQ_MSG(test, v, cases[i].val, "%s=\"%s\"",
					    k->name, cases[i].buf);
	}
	/* Reading gives back the value, as a name for the schedule. */
	pol.schedule = CM_SCHEDULE_BACKOFF;
	cm_policy_format(&pol, &cm_policy_knobs[CM_KNOB_SCHEDULE], buf);
	KUNIT_EXPECT_STREQ(test, buf, "backoff\n");
	cm_policy_format(&pol, &cm_policy_knobs[CM_KNOB_MAX_RESPONSE_TIMEOUT],
			 buf);
	KUNIT_EXPECT_STREQ(test, buf, "31\n");
}

/* ---- each message, through the fake ---- */

static void pk_set(struct fk *fk, u32 retries, u32 timeout)
{
	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy.max_retries = retries;
	fk->port->policy.max_response_timeout = timeout;
	spin_unlock_irq(&fk->port->policy_lock);
}

/* The outstanding message waits @ms and may be resent @retries times. */
static void pk_expect_tracked(struct fk *fk, int ms, int retries)
{
	struct fk_msg *m = fk_tracked(fk);

	KUNIT_ASSERT_NOT_NULL(fk->test, m);
	KUNIT_EXPECT_EQ(fk->test, m->timeout_ms, (u32)ms);
	KUNIT_EXPECT_EQ(fk->test, m->retries, retries);
}

/*
 * With the defaults, every retried message is timed as the stock one: the
 * REQ advertises what it was asked for and waits for it (two packet
 * lifetimes more), retried as asked.
 */
static void defaults_time_the_req_as_stock(struct kunit *test)
{
	struct fk *fk = test->priv;

	fk_active_req_sent(fk);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT,
				      FK_LAST(fk, req)), 20);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, FK_LAST(fk, req)),
			3);
	pk_expect_tracked(fk, 2 * PK_LIFE_MS + 4096, 3);
}

static void defaults_time_the_sidr_req_as_stock(struct kunit *test)
{
	struct fk *fk = test->priv;

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(fk_new_id(fk)), 0);
	pk_expect_tracked(fk, 100, 2);
}

static void defaults_time_rep_and_dreq_as_stock(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);

	/* REP: the timeout and retries of the peer's REQ. */
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	pk_expect_tracked(fk, 4096, 3);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* DREQ: the same. */
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	pk_expect_tracked(fk, 4096, 3);
}

/* A capped port: the REQ advertises the caps and waits by them. */
static void caps_apply_to_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;

	pk_set(fk, 1, 14);
	id = fk_active_req_sent(fk);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT,
				      FK_LAST(fk, req)), 14);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, FK_LAST(fk, req)),
			1);
	/* Not the peer's: the timeout it waits for us stays as asked. */
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT,
				      FK_LAST(fk, req)), 20);
	pk_expect_tracked(fk, cm_iba_to_ms(14), 1);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 2L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_REQ_ATTR_ID), 1L);
}

/*
 * The REP and the DREQ of a passive connection; each takes the policy.
 * Both wait for as long as the peer's REQ said it may take to answer
 * (its Local CM Response Timeout, 20 here): the peer advertised that, not
 * we, so a cap below it cuts only their retries.
 */
static void caps_keep_the_peers_timeout_on_rep_and_dreq(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);

	pk_set(fk, 2, 10);
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	pk_expect_tracked(fk, cm_iba_to_ms(20), 2);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* A change applies to the next exchange. */
	pk_set(fk, 0, 12);
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	pk_expect_tracked(fk, cm_iba_to_ms(20), 0);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
}

/* Under backoff too, the peer's timeout is the shortest wait. */
static void backoff_keeps_the_peers_timeout_on_rep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);
	struct fk_msg *m;

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy = pk_backoff(200, 0);
	fk->port->policy.max_retries = 1;
	fk->port->policy.max_response_timeout = 10;
	spin_unlock_irq(&fk->port->policy_lock);
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, m->timeout_ms, (u32)cm_iba_to_ms(20));
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, m->timeout_ms, (u32)cm_iba_to_ms(20));
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REP_ATTR_ID), 2L);
}

/* The active side's DREQ waits by the policy of when it is sent. */
static void caps_apply_to_active_dreq(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id = fk_active_established(fk);

	pk_set(fk, 1, 18);
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	pk_expect_tracked(fk, 1024, 1);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
}

static void caps_apply_to_sidr_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);

	/* 100 ms asked, 64 allowed; 2 retries asked, 1 allowed. */
	pk_set(fk, 1, 14);
	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	pk_expect_tracked(fk, 64, 1);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_ERROR);
	/* A cap above what is asked changes nothing. */
	pk_set(fk, 5, 20);
	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	pk_expect_tracked(fk, 100, 2);
}

/* An MRA extends the wait by no more than the cap. */
static void caps_apply_to_an_mra(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id;

	pk_set(fk, 3, 16);
	id = fk_active_req_sent(fk);
	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ, 24);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REQ_RCVD);
	pk_expect_tracked(fk, cm_iba_to_ms(16), 3);
}

/* @id sends its DREQ, the peer answers: @id is in TIMEWAIT. */
static void pk_dreq_answered(struct fk *fk, struct ib_cm_id *id)
{
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(fk->test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_TIMEWAIT);
}

/* Timewait lasts the path's timeout, and no more than the cap. */
static void caps_apply_to_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct cm_id_priv *p = to_priv(id);
	long left;

	pk_set(fk, CM_RETRIES_MAX, 20);
	pk_dreq_answered(fk, id);
	left = (long)(p->tw_due - jiffies);
	KUNIT_EXPECT_LE(test, left, (long)msecs_to_jiffies(cm_iba_to_ms(20)));
	fk_end_timewaits(fk);
}

/*
 * Timewait is cut by the policy the exchange took, not by the port's
 * policy of the moment: here a destroyed id's, which has no port to ask
 * any more, while the port's policy changed meanwhile.
 */
static void caps_apply_to_a_destroyed_ids_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	__be32 local_id = id->local_id;
	struct cm_timewait *tw;
	long left = LONG_MAX;
	void *entry;

	pk_set(fk, 1, 20);
	fk_destroy(fk, id);
	pk_set(fk, CM_RETRIES_MAX, CM_TIMEOUT_MAX);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	/* Destroyed, the id gave way to a timewait record. */
	rcu_read_lock();
	entry = xa_load(&cm.local_ids, cm_local_index(local_id));
	if (entry && xa_pointer_tag(entry) == CM_XA_RECORD) {
		tw = xa_untag_pointer(entry);
		left = (long)(READ_ONCE(tw->timer.expires) - jiffies);
	}
	rcu_read_unlock();
	KUNIT_EXPECT_LE(test, left, (long)msecs_to_jiffies(cm_iba_to_ms(20)));
	fk_end_timewaits(fk);
}

/*
 * Timewait ends on its own, as the kernel runs its end (not through
 * fk_end_timewaits()), and the id is destroyed after it.  The fake's
 * address handles take a lock with softirqs enabled, as rxe's pool does:
 * an end that took the id's lock in softirq context, with the id's lock
 * held while its address handle goes, is an inversion lockdep reports
 * (the debug run fails on it).
 */
static void timewait_ends_by_itself(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	unsigned int ms;

	/* A cap of 2^8 * 4.096 us: timewait lasts about a millisecond. */
	pk_set(fk, CM_RETRIES_MAX, 8);
	id = fk_active_established(fk);
	pk_dreq_answered(fk, id);
	for (ms = 0; READ_ONCE(id->state) != IB_CM_IDLE && ms < 5000; ms += 20)
		msleep(20);
	fk_flush();
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, (int)fk_last_event(fk)->type,
			IB_CM_TIMEWAIT_EXIT);
	fk_destroy(fk, id);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

static void timewait_is_stock_under_the_defaults(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct cm_id_priv *p = to_priv(id);
	long left;

	pk_dreq_answered(fk, id);
	left = (long)(p->tw_due - jiffies);
	/* The path's (FK_LIFE + 1 at least), not cut: over half a minute. */
	KUNIT_EXPECT_GT(test, left, (long)msecs_to_jiffies(30000));
	fk_end_timewaits(fk);
}

/*
 * Backoff: the CM resends a copy of the REQ after each timeout, each wait
 * longer, never below the advertised timeout, and reports REQ_ERROR after
 * the last; the counters count as for the MAD layer's resends.
 */
static void backoff_resends_from_the_cm(struct kunit *test)
{
	struct fk *fk = test->priv;
	int base = cm_iba_to_ms(14);
	struct ib_cm_id *id;
	struct fk_msg *m;
	unsigned int i;

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy = pk_backoff(200, 50);
	fk->port->policy.max_retries = 2;
	fk->port->policy.max_response_timeout = 14;
	spin_unlock_irq(&fk->port->policy_lock);

	id = fk_active_req_sent(fk);
	for (i = 0; i <= 2; i++) {
		u64 nom = pk_nominal(base, i, 200);

		m = fk_tracked(fk);
		KUNIT_ASSERT_NOT_NULL(test, m);
		FK_EXPECT_SENT(fk, 1 + i, CM_REQ_ATTR_ID);
		KUNIT_EXPECT_EQ(test, fk_last(fk)->backoff, i > 0);
		KUNIT_EXPECT_FALSE(test, fk_last(fk)->resent);
		/* The same REQ each time. */
		KUNIT_EXPECT_EQ(test, memcmp(&fk->sent[0].mad, &fk_last(fk)->mad,
					     sizeof(fk->sent[0].mad)), 0);
		KUNIT_EXPECT_EQ(test, m->retries, 0);
		KUNIT_EXPECT_GE(test, (u64)m->timeout_ms, nom);
		KUNIT_EXPECT_LE(test, (u64)m->timeout_ms, nom + nom / 2);
		KUNIT_EXPECT_EQ(test, to_priv(id)->msg_resends, i);
		KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	}
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 3L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_REQ_ATTR_ID), 2L);
}

/* How many messages of attribute @attr were sent so far. */
static unsigned int pk_sent_of(struct fk *fk, __be16 attr)
{
	unsigned int i, n = 0;

	for (i = 0; i < min_t(unsigned int, fk->nsent, FK_SENT_MAX); i++)
		if (fk->sent[i].attr == attr)
			n++;
	return n;
}

/*
 * Backoff: a destroyed id's DREQ is resent like any other, though the id
 * let go of its path when it was destroyed: 1 + CM_DESTROY_RETRIES DREQs,
 * each the same, and its port's window slot given back at the end.
 */
static void backoff_resends_a_destroyed_ids_dreq(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	unsigned int n = 0;

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy = pk_backoff(65536, 25);
	spin_unlock_irq(&fk->port->policy_lock);
	id = fk_active_established(fk);
	fk_destroy(fk, id);
	KUNIT_ASSERT_EQ(test, pk_sent_of(fk, CM_DREQ_ATTR_ID), 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 1);
	while (n <= CM_DESTROY_RETRIES + 1 && fk_time_out(fk)) {
		n++;
		KUNIT_EXPECT_EQ(test, fk_last(fk)->attr, CM_DREQ_ATTR_ID);
	}
	KUNIT_EXPECT_EQ(test, n, CM_DESTROY_RETRIES + 1);
	KUNIT_EXPECT_EQ(test, pk_sent_of(fk, CM_DREQ_ATTR_ID),
			CM_DESTROY_RETRIES + 1);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_DREQ_ATTR_ID),
			(long)CM_DESTROY_RETRIES + 1);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_DREQ_ATTR_ID),
			(long)CM_DESTROY_RETRIES);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 0);
	fk_end_timewaits(fk);
}

/*
 * Backoff: a timeout that comes while the port's agent is being
 * unregistered makes no copy on it, or on any agent registered since; the
 * id hears nothing, as of a send the unregistration flushed.
 */
static void backoff_resends_nothing_on_an_agent_going_away(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct cm_device *cm_dev = fk->port->cm_dev;
	struct ib_mad_agent *agent;
	struct ib_cm_id *id;

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy = pk_backoff(65536, 25);
	spin_unlock_irq(&fk->port->policy_lock);
	id = fk_active_req_sent(fk);
	write_lock_irq(&cm_dev->agent_lock);
	agent = fk->port->mad_agent;
	WRITE_ONCE(fk->port->mad_agent, NULL);
	write_unlock_irq(&cm_dev->agent_lock);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	write_lock_irq(&cm_dev->agent_lock);
	WRITE_ONCE(fk->port->mad_agent, agent);
	write_unlock_irq(&cm_dev->agent_lock);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_SENT);
}

/*
 * The id listing shows what an id waiting for its answer goes by: the wait
 * and retries of its outstanding message, and when it resends next or,
 * after its last send, gives up.  (Under the fixed schedule the count of
 * resends is the MAD layer's, which the fake does not keep; backoff's is
 * the CM's own.)
 */
static void listing_shows_the_timing_of_a_wait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	char *listing;

	pk_set(fk, 2, 18);
	id = fk_active_req_sent(fk);
	listing = fk_listing(test);
	fk_expect_listed(test, listing, " REQ_SENT LAP_UNINIT 0x%08x ",
			 fk_local(id));
	fk_expect_listed(test, listing, " timeout_ms=1024 max_retries=2 ");
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy.schedule = CM_SCHEDULE_BACKOFF;
	fk->port->policy.backoff_jitter = 0;
	spin_unlock_irq(&fk->port->policy_lock);
	id = fk_active_req_sent(fk);
	fk_expect_listed(test, fk_listing(test),
			 " 0 timeout_ms=1024 max_retries=2 resend_in_ms=");
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	fk_expect_listed(test, fk_listing(test),
			 " 1 timeout_ms=2048 max_retries=2 resend_in_ms=");
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	fk_expect_listed(test, fk_listing(test),
			 " 2 timeout_ms=4096 max_retries=2 gives_up_in_ms=");
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);

	/* Established: no message waits, the line ends as before. */
	fk_active_established(fk);
	listing = fk_listing(test);
	KUNIT_EXPECT_NULL(test, strstr(listing, "timeout_ms="));
}

/* An answer during backoff ends it as it ends the MAD layer's resends. */
static void backoff_ends_with_the_answer(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id;

	spin_lock_irq(&fk->port->policy_lock);
	fk->port->policy = pk_backoff(65536, 25);
	spin_unlock_irq(&fk->port->policy_lock);

	id = fk_active_req_sent(fk);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_SENT(fk, 2, CM_REQ_ATTR_ID);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	fk_settle(fk);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static struct kunit_case pk_cases[] = {
	KUNIT_CASE(defaults_bound_nothing),
	KUNIT_CASE(fixed_schedule_waits_the_timeout),
	KUNIT_CASE(caps_cut_timeouts_and_retries),
	KUNIT_CASE(three_retries_at_18_end_within_5s),
	KUNIT_CASE(backoff_never_below_the_timeout_jitter_bounded),
	KUNIT_CASE(backoff_examples),
	KUNIT_CASE(policy_values_are_parsed_and_checked),
	KUNIT_CASE(defaults_time_the_req_as_stock),
	KUNIT_CASE(defaults_time_the_sidr_req_as_stock),
	KUNIT_CASE(defaults_time_rep_and_dreq_as_stock),
	KUNIT_CASE(caps_apply_to_req),
	KUNIT_CASE(caps_keep_the_peers_timeout_on_rep_and_dreq),
	KUNIT_CASE(backoff_keeps_the_peers_timeout_on_rep),
	KUNIT_CASE(caps_apply_to_active_dreq),
	KUNIT_CASE(caps_apply_to_sidr_req),
	KUNIT_CASE(caps_apply_to_an_mra),
	KUNIT_CASE(caps_apply_to_timewait),
	KUNIT_CASE(caps_apply_to_a_destroyed_ids_timewait),
	KUNIT_CASE(timewait_is_stock_under_the_defaults),
	KUNIT_CASE(timewait_ends_by_itself),
	KUNIT_CASE(backoff_resends_from_the_cm),
	KUNIT_CASE(backoff_ends_with_the_answer),
	KUNIT_CASE(backoff_resends_a_destroyed_ids_dreq),
	KUNIT_CASE(backoff_resends_nothing_on_an_agent_going_away),
	KUNIT_CASE(listing_shows_the_timing_of_a_wait),
	{}
};

static struct kunit_suite pk_suite = {
	.name = "ib_cm_policy",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = pk_cases,
};

kunit_test_suite(pk_suite);
