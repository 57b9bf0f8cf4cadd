// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_ordering: MADs that arrive behind inputs not yet processed
 *
 * A received MAD finds its id when it comes in, while the inputs before
 * it may still wait on a queue.  Each case holds a queue (as a busy
 * worker would), lets MADs arrive behind an input that changes what they
 * are for, then lets the queue run: the outcome must be the one of
 * processing them in order.
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <trace/events/kmem.h>

/* A REJ TIMEOUT from the peer: our comm ID @ours (0: never told). */
static void fk_rej_timeout(union cm_kunit_msg *mad, u32 ours, u32 peer)
{
	__be64 guid = cpu_to_be64(FK_PEER_GUID);

	fk_rej(mad, ours, peer, CM_MSG_RESPONSE_OTHER, IB_CM_REJ_TIMEOUT);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad->rej, sizeof(guid));
	memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad->rej), &guid, sizeof(guid));
}

/* The peer sends its REP and destroys its id at once: REP, then REJ. */
static void rej_right_behind_a_rep_follows_it(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 0L);
}

/* Checked once the REP has been taken: a stranger's REJ is dropped. */
static void strangers_rej_behind_a_rep_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_rej(&mad, fk_local(id), FK_PEER_ID + 7, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 1L);
}

/*
 * The initiator of a REQ that still waits on a slow listener gives up:
 * its REJ TIMEOUT must reach the id that the REQ makes.
 */
static void rej_timeout_behind_its_req_reaches_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;

	fk_hold(listen);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_rej_timeout(&mad, 0, FK_PEER_ID);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, listen);

	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk->events[1].id, fk->events[0].id);
	KUNIT_EXPECT_EQ(test, fk->events[1].reason, (int)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, fk->events[0].id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 0L);
}

/* A REQ that goes nowhere takes the REJ TIMEOUT behind it along. */
static void rej_timeout_behind_a_refused_req_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_REQ_RECEIVED] = -ECONNREFUSED;
	fk_hold(listen);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_rej_timeout(&mad, 0, FK_PEER_ID);
	fk_inject(fk, &mad, NULL);
	fk_let_go(fk, listen);

	/*
	 * Our REJ of the REQ; the peer's REJ reaches the refused id, which
	 * has nothing to say to it.
	 */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk->events[0].id);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * ib_srpt calls ib_cm_notify(COMM_EST) when the RTU was lost; a DREQ
 * that came first leaves ESTABLISHED, and the late event is not given.
 */
static void user_established_after_a_dreq_is_not_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	fk_hold(id);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_inject(fk, &mad, NULL);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_let_go(fk, id);

	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
}

/*
 * Across an IB router a REQ names both LIDs as permissive: the path takes
 * our LID's path bits and the SL from the packet that brought it.
 */
static void routed_req_takes_lid_and_sl_from_the_packet(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->rx_sl = 5;
	fk->rx_path_bits = 3;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_SUBNET_LOCAL, &mad.req, 0);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_PORT_LID, &mad.req, 0xffff);
	IBA_SET(CM_REQ_PRIMARY_REMOTE_PORT_LID, &mad.req, 0xffff);
	IBA_SET(CM_REQ_PRIMARY_SL, &mad.req, 1);
	fk_receive(fk, &mad);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_dlid, (u32)FK_PEER_LID);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_slid, 3U);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_sl, 5);
}

/* On one subnet the REQ's own SL and LIDs stand. */
static void local_req_keeps_its_lid_and_sl(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->rx_sl = 5;
	fk->rx_path_bits = 3;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_SL, &mad.req, 1);
	fk_receive(fk, &mad);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_slid, 1U);
	KUNIT_EXPECT_EQ(test, fk->events[0].path_sl, 1);
}

/* The last message sent was resent, carrying fk_pdata at @pdata. */
static void fk_expect_resent_pdata(struct fk *fk, const void *pdata)
{
	KUNIT_EXPECT_TRUE(fk->test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(fk->test, memcmp(pdata, fk_pdata, sizeof(fk_pdata)), 0);
}

/* A repeated REP is answered with the RTU as the consumer sent it. */
static void resent_rtu_keeps_its_private_data(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, fk_pdata, sizeof(fk_pdata)),
			0);
	fk_settle(fk);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	fk_expect_resent_pdata(fk, IBA_GET_MEM_PTR(CM_RTU_PRIVATE_DATA,
						   FK_LAST(fk, rtu)));
}

/* A repeated DREQ in timewait gets the DREP as the consumer sent it. */
static void resent_drep_keeps_its_private_data(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, fk_pdata, sizeof(fk_pdata)),
			0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
	fk_expect_resent_pdata(fk, IBA_GET_MEM_PTR(CM_DREP_PRIVATE_DATA,
						   FK_LAST(fk, drep)));
}

/* After a path migration (LAP idle) a stray REJ changes nothing. */
static void rej_after_path_migration_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct cm_id_priv *p = to_priv(id);
	union cm_kunit_msg mad;

	spin_lock_irq(&p->lock);
	cm_set_lap_state(p, IB_CM_LAP_IDLE, CM_PATH_MIG);
	spin_unlock_irq(&p->lock);
	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_OTHER,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/*
 * A connection destroyed while established retries its DREQ, but its QP
 * is gone: the peer may reuse its own QPN for a new connection at once.
 */
static void destroyed_connection_frees_the_peers_qpn(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
}

/* Allocations that may sleep, made on the receive path. */
static void fk_count_blocking(void *data, unsigned long call_site,
			      const void *ptr, struct kmem_cache *s,
			      gfp_t gfp, int node)
{
	struct fk *fk = data;

	if (fk->receiving == current && gfpflags_allow_blocking(gfp))
		atomic_inc(&fk->blocking);
}

/*
 * The MAD layer's receive path may not sleep: it alone refills QP1.  No
 * allocation on it may, then (kmem's trace point tells their flags).
 */
static void receive_path_does_not_sleep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test,
			register_trace_kmem_cache_alloc(fk_count_blocking, fk),
			0);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_inject(fk, &mad, NULL);
	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_inject(fk, &mad, NULL);
	unregister_trace_kmem_cache_alloc(fk_count_blocking, fk);
	tracepoint_synchronize_unregister();
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->blocking), 0);
}

/*
 * Hand @mad to the CM from a sender whose address takes until the test
 * releases it (fk->release) to make, and wait until that is where it is.
 */
static void fk_inject_held(struct fk *fk, const union cm_kunit_msg *mad)
{
	fk->hold_slid = FK_PEER_LID + 0x40;
	fk->rx_slid = fk->hold_slid;
	fk_inject(fk, mad, NULL);
	fk_wait_held(fk, 1);
	fk->rx_slid = 0;
}

/* Wait up to 5 s for @n events, and expect them. */
static void fk_wait_events(struct fk *fk, unsigned int n)
{
	unsigned int ms;

	for (ms = 0; READ_ONCE(fk->nevents) < n && ms < 5000; ms += 20)
		msleep(20);
	KUNIT_EXPECT_EQ(fk->test, READ_ONCE(fk->nevents), n);
}

/*
 * Making the address of one REQ's sender may wait (on RoCE, a second for
 * an address that does not resolve): the listener's other REQs go on.
 */
static void slow_address_holds_up_no_other_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 1);
	KUNIT_EXPECT_EQ(test, fk->events[0].qpn, FK_PEER_QPN + 1);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk->events[1].qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/*
 * A listener destroyed while a request (@mad) waits on its queue, and
 * another made for the same service: the request goes to the new one,
 * which hears of it as @event, and nothing is sent.
 */
static void fk_request_to_a_replaced_listener(struct fk *fk,
					      const union cm_kunit_msg *mad,
					      int event)
{
	struct ib_cm_id *old = fk_listen(fk);
	struct ib_cm_id *new;

	fk_hold(old);
	fk_inject(fk, mad, NULL);
	fk_disown(fk, old);
	ib_destroy_cm_id(old);
	new = fk_listen(fk);
	fk_let_go(fk, old);

	FK_EXPECT_EVENT(fk, 1, event);
	KUNIT_EXPECT_PTR_EQ(fk->test, fk->events[0].listen_id, new);
	FK_EXPECT_SENT(fk, 0, 0);
}

static void req_waiting_on_a_replaced_listener_goes_to_the_new_one(struct kunit *test)
{
	union cm_kunit_msg mad;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_request_to_a_replaced_listener(test->priv, &mad, IB_CM_REQ_RECEIVED);
}

static void sidr_req_waiting_on_a_replaced_listener_goes_to_the_new_one(struct kunit *test)
{
	union cm_kunit_msg mad;

	fk_sidr_req(&mad, 0x77, FK_SID);
	fk_request_to_a_replaced_listener(test->priv, &mad,
					  IB_CM_SIDR_REQ_RECEIVED);
}

/* A REJ of our REQ that comes once we know the peer is not its. */
static void late_rej_of_our_req_leaves_an_established_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID + 7, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), 1L);
}

/*
 * A passive connection from @peer's QP @qpn, whose REQ asks for 15 retries
 * and says the peer may take 2.3 hours to answer (31, IBA's largest).
 */
static struct ib_cm_id *fk_passive_conn(struct fk *fk, u32 peer, u32 qpn)
{
	union cm_kunit_msg mad;
	struct ib_cm_id *id;

	fk_req(&mad, peer, qpn, FK_SID);
	IBA_SET(CM_REQ_MAX_CM_RETRIES, &mad.req, 15);
	IBA_SET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, &mad.req, 31);
	fk_receive(fk, &mad);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(fk->test, fk_send_rep(id), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), peer);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(fk->test, id->state, IB_CM_ESTABLISHED);
	return id;
}

static void fk_restore_destroy_window(void *old)
{
	cm_destroy_window = (unsigned long)old;
}

/*
 * A destroyed connection retries its DREQ a few times, and only so many
 * of them at once on a port; past that the DREQ goes out once.  Inside
 * the window or past it, each wait is CM_DESTROY_TIMEOUT's at most, even
 * from a peer that says it may take hours to answer (31: 2.3 h).
 */
static void destroyed_connections_retry_few_dreqs(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *a, *b;

	KUNIT_ASSERT_EQ(test,
			kunit_add_action(test, fk_restore_destroy_window,
					 (void *)(unsigned long)cm_destroy_window),
			0);
	cm_destroy_window = 1;
	fk_listen(fk);
	a = fk_passive_conn(fk, FK_PEER_ID, FK_PEER_QPN);
	b = fk_passive_conn(fk, FK_PEER_ID + 1, FK_PEER_QPN + 1);

	fk_destroy(fk, a);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->buf.retries, 3);
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->timeout_ms,
			(u32)cm_iba_to_ms(CM_DESTROY_TIMEOUT));
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	fk_destroy(fk, b);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->buf.retries, 0);
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->timeout_ms,
			(u32)cm_iba_to_ms(CM_DESTROY_TIMEOUT));
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 1);

	KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->destroy_dreqs), 0);
}

/*
 * rdma_cm's usual order, rdma_disconnect() and then rdma_destroy_id(): the
 * user's DREQ is out when the id is destroyed.  It goes on being retried
 * (on the CM agent, with its own retries), but from then on each wait is
 * CM_DESTROY_TIMEOUT's at most: a peer that says it may take 2.3 hours
 * keeps the destroyed id for about a minute, not for 16 times that.
 */
static void dreq_out_at_destroy_waits_are_capped(struct kunit *test)
{
	struct fk *fk = test->priv;
	u32 cap = cm_iba_to_ms(CM_DESTROY_TIMEOUT);
	struct cm_id_priv *p;
	struct ib_cm_id *id;

	fk_listen(fk);
	id = fk_passive_conn(fk, FK_PEER_ID, FK_PEER_QPN);
	p = to_priv(id);
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->timeout_ms,
			(u32)cm_iba_to_ms(31));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->buf.retries, 15);

	fk_destroy(fk, id);
	KUNIT_ASSERT_NOT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_tracked(fk)->timeout_ms, cap);
	spin_lock_irq(&p->lock);
	KUNIT_EXPECT_EQ(test, (u32)p->msg_timeout_ms, cap);
	spin_unlock_irq(&p->lock);

	KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

/*
 * Answering a REQ that makes no connection (here a stale one's REJ) may
 * wait for the sender's address too: the listener's other REQs go on.
 */
static void slow_answer_holds_up_no_other_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_established(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID + 2, FK_PEER_QPN + 2, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 3);
	KUNIT_EXPECT_EQ(test, fk->events[2].qpn, FK_PEER_QPN + 2);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	/* The stale REJ went out in the end. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REJ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/* The same for a SIDR_REQ, which shares the listener of rdma_cm's IB space. */
static void slow_sidr_address_holds_up_no_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_sidr_req(&mad, 0x77, FK_SID);
	fk_inject_held(fk, &mad);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_inject(fk, &mad, NULL);
	fk_wait_events(fk, 1);
	KUNIT_EXPECT_EQ(test, fk->events[0].type, IB_CM_REQ_RECEIVED);

	complete_all(&fk->release);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

/* A port that goes away drops its waiting answers, counted as backlog. */
static void answers_dropped_at_port_removal_are_counted(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	WRITE_ONCE(fk->port->mad_agent, NULL);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID + 1);
	fk_inject(fk, &mad, NULL);
	fk_flush();
	WRITE_ONCE(fk->port->mad_agent, &fk->agent);
	KUNIT_EXPECT_EQ(test, fk->nsent, 0U);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_BACKLOG), 1L);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->port->backlog), 0);
}

static struct kunit_case fk_order_cases[] = {
	KUNIT_CASE(rej_right_behind_a_rep_follows_it),
	KUNIT_CASE(strangers_rej_behind_a_rep_is_dropped),
	KUNIT_CASE(rej_timeout_behind_its_req_reaches_the_new_id),
	KUNIT_CASE(rej_timeout_behind_a_refused_req_is_dropped),
	KUNIT_CASE(user_established_after_a_dreq_is_not_delivered),
	KUNIT_CASE(routed_req_takes_lid_and_sl_from_the_packet),
	KUNIT_CASE(local_req_keeps_its_lid_and_sl),
	KUNIT_CASE(resent_rtu_keeps_its_private_data),
	KUNIT_CASE(resent_drep_keeps_its_private_data),
	KUNIT_CASE(rej_after_path_migration_is_ignored),
	KUNIT_CASE(destroyed_connection_frees_the_peers_qpn),
	KUNIT_CASE(receive_path_does_not_sleep),
	KUNIT_CASE(answers_dropped_at_port_removal_are_counted),
	KUNIT_CASE(req_waiting_on_a_replaced_listener_goes_to_the_new_one),
	KUNIT_CASE(sidr_req_waiting_on_a_replaced_listener_goes_to_the_new_one),
	KUNIT_CASE(late_rej_of_our_req_leaves_an_established_id),
	KUNIT_CASE(destroyed_connections_retry_few_dreqs),
	KUNIT_CASE(dreq_out_at_destroy_waits_are_capped),
	KUNIT_CASE_SLOW(slow_address_holds_up_no_other_req),
	KUNIT_CASE_SLOW(slow_answer_holds_up_no_other_req),
	KUNIT_CASE_SLOW(slow_sidr_address_holds_up_no_req),
	{}
};

static struct kunit_suite fk_order_suite = {
	.name = "ib_cm_ordering",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_order_cases,
};

kunit_test_suite(fk_order_suite);
