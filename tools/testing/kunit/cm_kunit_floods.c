// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_floods: the backlog of received MADs is bounded
 *
 * Listeners whose handlers take their time hold up a bounded number of
 * REQs, per listener and per port, and what comes on top is counted and
 * dropped; answers held up hold up nothing else, and those that waited
 * too long are dropped.
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>
#include <linux/delay.h>

/* The listener's handler takes its time: until the test releases it. */
static void fk_hold_in_handler(struct fk *fk, struct ib_cm_id *id,
			       const struct ib_cm_event *e)
{
	/* The CM destroys the id after this (the handler returns 1). */
	fk_disown(fk, id);
	atomic_inc(&fk->held);
	wait_for_completion(&fk->release);
}

/*
 * A REQ flood at a listener whose handler is slow: CM_ID_BACKLOG REQs wait,
 * the rest are dropped and counted, and each of those is only a drop.
 */
static void req_flood_at_a_slow_listener_is_bounded(struct kunit *test)
{
	struct fk *fk = test->priv;
	unsigned int flood = CM_ID_BACKLOG + 100, i;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hook = fk_hold_in_handler;
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;	/* the CM destroys each */
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_held(fk, 1);
	/* The handler is busy with the first: the rest wait or are dropped. */
	for (i = 1; i <= flood; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID);
		fk_inject(fk, &mad, NULL);
	}
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG),
			(long)(flood - CM_ID_BACKLOG));
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_ID_BACKLOG + 1);
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* Each REQ that waited was handed over (and rejected, as returned). */
	KUNIT_EXPECT_EQ(test, fk->hook_calls, CM_ID_BACKLOG + 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);	/* the listener */
}

/* Many listeners flooded at once: the port's bound holds for them all. */
static void flood_of_many_listeners_is_bounded_per_port(struct kunit *test)
{
	unsigned int nlisten = CM_PORT_BACKLOG / CM_ID_BACKLOG + 1;
	struct fk *fk = test->priv;
	struct ib_cm_id **listen;
	union cm_kunit_msg mad;
	unsigned int l, i;
	u32 peer = FK_PEER_ID;

	listen = kunit_kcalloc(test, nlisten, sizeof(*listen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, listen);
	fk->hook = fk_hold_in_handler;
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;
	for (l = 0; l < nlisten; l++) {
		listen[l] = fk_new_id(fk);
		KUNIT_ASSERT_EQ(test, ib_cm_listen(listen[l],
						   cpu_to_be64(FK_SID + l)), 0);
	}
	/* One REQ for each listener in turn, more than the port takes. */
	for (i = 0; i < CM_ID_BACKLOG; i++)
		for (l = 0; l < nlisten; l++) {
			fk_req(&mad, peer, FK_PEER_QPN + (peer - FK_PEER_ID),
			       FK_SID + l);
			peer++;
			fk_inject(fk, &mad, NULL);
			if (!i)
				fk_wait_held(fk, l + 1);
		}
	/* Every listener's first REQ is in its handler, the rest waits. */
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_PORT_BACKLOG);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG),
			(long)(nlisten * CM_ID_BACKLOG - CM_PORT_BACKLOG));
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), nlisten);
}

/*
 * Messages for nobody are answered off the receive path.  While making an
 * answer is held up (on RoCE, a peer whose address does not resolve),
 * CM_ANSWER_BACKLOG more wait, the rest are dropped and counted, and a REQ
 * for a listener still reaches it.
 */
static void answers_held_up_hold_up_nothing_else(struct kunit *test)
{
	unsigned int flood = CM_ANSWER_BACKLOG + 10, i, ms;
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hold_answers = true;
	/* REQs for a service nobody listens for, each to be rejected. */
	for (i = 0; i <= flood; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID + 1);
		fk_inject(fk, &mad, NULL);
		if (!i)
			fk_wait_held(fk, 1);
	}
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 10L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog),
			CM_ANSWER_BACKLOG + 1);

	fk_req(&mad, FK_PEER_ID + flood + 1, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	for (ms = 0; !READ_ONCE(fk->nevents) && ms < 30000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_EQ(test, READ_ONCE(fk->nevents), 1U);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->nsent, 0U);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/*
	 * Every REQ that waited got its REJ, unless it waited too long (see
	 * the next test): then it is one more drop.
	 */
	KUNIT_EXPECT_EQ(test, fk->nsent + fk_drops(fk, CM_DROP_BACKLOG) - 10,
			CM_ANSWER_BACKLOG + 1U);
	KUNIT_EXPECT_GE(test, fk->nsent, 1U);
	KUNIT_EXPECT_EQ(test, fk->sent[0].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[0].mad.rej),
			IB_CM_REJ_INVALID_SERVICE_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * An answer that waited CM_ANSWER_MAX_AGE is dropped and counted: behind
 * answers that take a second each, a flood drains at once.
 */
static void answers_that_waited_too_long_are_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	unsigned int i;

	fk->hold_answers = true;
	for (i = 0; i < 5; i++) {
		fk_req(&mad, FK_PEER_ID + i, FK_PEER_QPN + i, FK_SID);
		fk_inject(fk, &mad, NULL);
		if (!i)
			fk_wait_held(fk, 1);
	}
	msleep(jiffies_to_msecs(CM_ANSWER_MAX_AGE) + 100);
	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* The one being made when they waited is sent. */
	KUNIT_EXPECT_EQ(test, fk->nsent, 1U);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 4L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

static struct kunit_case fk_flood_cases[] = {
	KUNIT_CASE_SLOW(req_flood_at_a_slow_listener_is_bounded),
	KUNIT_CASE_SLOW(flood_of_many_listeners_is_bounded_per_port),
	KUNIT_CASE_SLOW(answers_held_up_hold_up_nothing_else),
	KUNIT_CASE_SLOW(answers_that_waited_too_long_are_dropped),
	{}
};

static struct kunit_suite fk_flood_suite = {
	.name = "ib_cm_floods",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_flood_cases,
};

kunit_test_suite(fk_flood_suite);
