// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_duplicates: duplicates and stale connections
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>
#include <linux/delay.h>

static void repeated_req_while_pending_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_req_rcvd(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 2U);
}

static void repeated_req_after_rep_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_rep_sent(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	/* The REP is retried by the MAD layer; nothing extra goes out. */
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
}

static void repeated_req_in_timewait_gets_stale_conn(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREP_RECEIVED);
}

static void repeated_rep_when_established_resends_the_rtu(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
	/* Counted as the stock module does: 1 + 1 retry. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_RTU_ATTR_ID), 3L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_RTU_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void repeated_rep_while_deciding_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
}

static void repeated_rep_after_mra_resends_the_mra(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REP_SENT);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 2, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_REP);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REP_ATTR_ID), 1L);
	/* The RTU still completes the connection. */
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 3, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void repeated_dreq_in_timewait_resends_the_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
}

/*
 * Destroy a connected @id; the DREQ that destroy sends is retried until
 * the peer's DREP, which comes here at once.
 */
static void fk_destroy_answered(struct fk *fk, struct ib_cm_id *id)
{
	u32 local = fk_local(id), remote = be32_to_cpu(id->remote_id);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, remote);
	fk_receive(fk, &mad);
}

/*
 * An id destroyed in timewait gives way to a small record, which still
 * answers the peer: a DREQ with a repeated DREP, a repeated REQ with REJ
 * STALE_CONN in the id's name.
 */
static void destroyed_id_in_timewait_leaves_a_small_record(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	unsigned int ids = fk_ids_on_device(fk);
	union cm_kunit_msg mad;
	u32 local = fk_local(id);

	if (!IS_ENABLED(CONFIG_LOCKDEP) && !IS_ENABLED(CONFIG_DEBUG_OBJECTS_TIMERS))
		KUNIT_EXPECT_LE(test, sizeof(struct cm_timewait), 128U);
	fk_destroy_answered(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);

	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			(u64)local);

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 4, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_LOCAL_COMM_ID, FK_LAST(fk, rej)),
			(u64)local);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);

	/* When it ends, the peer's IDs are unknown again. */
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);
	KUNIT_EXPECT_EQ(test, fk_record_left(local), -1L);
	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 5, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_FALSE(test, fk_last(fk)->resent);
	/* The listener is still there: the REQ is a new connection. */
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->type, IB_CM_REQ_RECEIVED);
}

/* A peer's local ACK timeout of 31 (2.4 hours) gives about a minute. */
static void timewait_from_a_huge_ack_timeout_is_cut(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	struct ib_cm_id *id;
	long left;
	u32 local;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, &mad.req, 31);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, fk_last_event(fk)->type, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	local = fk_local(id);

	fk_destroy_answered(fk, id);
	left = fk_record_left(local);
	KUNIT_EXPECT_GT(test, left, (long)msecs_to_jiffies(cm_iba_to_ms(23)));
	KUNIT_EXPECT_LE(test, left,
			(long)msecs_to_jiffies(cm_iba_to_ms(CM_TIMEWAIT_MAX_IBA)));
	KUNIT_EXPECT_LE(test, cm_iba_to_ms(CM_TIMEWAIT_MAX_IBA), 70000);
}

static void fk_restore_max_timewait(void *old)
{
	WRITE_ONCE(cm_max_timewait, (unsigned int)(uintptr_t)old);
}

/* Past max_timewait records, a destroyed id leaves timewait at once. */
static void timewait_records_are_bounded(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *first = fk_passive_established(fk);
	struct ib_cm_id *second = fk_active_req_sent(fk);
	void *old = (void *)(uintptr_t)READ_ONCE(cm_max_timewait);
	union cm_kunit_msg mad;
	unsigned int ids;
	u32 local;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							fk_restore_max_timewait,
							old), 0);
	WRITE_ONCE(cm_max_timewait, 1);

	fk_rep(&mad, fk_local(second), FK_PEER_ID + 1, FK_PEER_QPN + 1);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(second, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, second->state, IB_CM_ESTABLISHED);

	fk_destroy_answered(fk, first);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	ids = fk_ids_on_device(fk);
	local = fk_local(second);
	fk_destroy_answered(fk, second);
	/* Its timer was set to fire now. */
	msleep(100);
	fk_flush();
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, fk_record_left(local), -1L);
}

/* The debugfs listing of ids, read whole through its seq_file operations. */
static char *fk_listing(struct kunit *test)
{
	struct seq_file m = { .size = 16384 };
	loff_t pos = 0;
	void *v;

	m.buf = kunit_kzalloc(test, m.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	for (v = cm_ids_start(&m, &pos); v; v = cm_ids_next(&m, v, &pos))
		cm_ids_show(&m, v);
	cm_ids_stop(&m, v);
	KUNIT_EXPECT_FALSE(test, seq_has_overflowed(&m));
	m.buf[min(m.count, m.size - 1)] = '\0';
	return m.buf;
}

static __printf(3, 4) void fk_expect_listed(struct kunit *test,
					    const char *listing,
					    const char *fmt, ...)
{
	char want[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(listing, want),
				  "no \"%s\" in:\n%s", want, listing);
}

/* Each id and timewait record has its line, and a read resumes. */
static void listing_shows_ids_and_records(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	u32 local = fk_local(id);
	struct seq_file m = {};
	const char *list;
	loff_t pos;

	list = fk_listing(test);
	KUNIT_EXPECT_TRUE(test, str_has_prefix(list, "device port state lap_state"));
	fk_expect_listed(test, list, "- 0 LISTEN LAP_UNINIT 0x");
	fk_expect_listed(test, list, " 0x00000000 0x000000 0x000000 0x%016llx ",
			 FK_SID);
	fk_expect_listed(test, list, " 0 listener\n");
	fk_expect_listed(test, list,
			 "- 1 ESTABLISHED LAP_UNINIT 0x%08x 0x%08x 0x%06x 0x%06x 0x%016llx ",
			 local, FK_PEER_ID, FK_OUR_QPN, FK_PEER_QPN, FK_SID);

	/* Started at the id's position, the walk starts with the id. */
	pos = cm_local_index(id->local_id) + 1;
	KUNIT_EXPECT_PTR_EQ(test, cm_ids_start(&m, &pos), (void *)to_priv(id));
	cm_ids_stop(&m, NULL);

	fk_destroy_answered(fk, id);
	list = fk_listing(test);
	fk_expect_listed(test, list,
			 "- 0 TIMEWAIT - 0x%08x 0x%08x - - - - 0 timewait record ends_in_ms=",
			 local, FK_PEER_ID);
	fk_end_timewaits(fk);
	list = fk_listing(test);
	KUNIT_EXPECT_NULL(test, strstr(list, "TIMEWAIT"));
}

/*
 * A connection makes one address handle, when its path is set, and every
 * send along the path uses it: the REQ, the RTU, the DREQ.  An answer to
 * a stranger gets one of its own, gone when the send completes.
 */
static void one_address_handle_serves_a_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);

	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID + 1);
	fk_receive(fk, &mad);		/* nobody listens: REJ, completed */
	KUNIT_EXPECT_EQ(test, fk_last(fk)->attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);

	fk_destroy_answered(fk, id);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

/*
 * The passive side too: the REQ's id answers along the REQ's path, so the
 * way back that the work completion gives needs no handle of its own.
 */
static void a_passive_connection_makes_one_address_handle(struct kunit *test)
{
	struct fk *fk = test->priv;
	int before = atomic_read(&fk->ahs_made);
	struct ib_cm_id *id = fk_passive_established(fk);

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), before + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);
	fk_destroy_answered(fk, id);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

/*
 * When the device goes, the handles of ids nobody destroyed go with it
 * (the MAD layer frees their PD next); the ids cannot send any more, and
 * destroying them later destroys no handle twice.
 */
static void device_removal_destroys_live_handles(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 1);
	cm_forget_ahs(fk->cm_dev);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -ENODEV);
	/* No new handle either. */
	KUNIT_EXPECT_EQ(test, fk_send_req(fk_new_id(fk)), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs_made), 1);
	fk_destroy(fk, id);
	KUNIT_EXPECT_EQ(test, atomic_read(&fk->ahs), 0);
}

static void repeated_dreq_before_the_drep_is_counted_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID), 1L);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
}

static void dreq_for_a_forgotten_connection_gets_a_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_dreq(&mad, 0x0badf00d, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_REMOTE_COMM_ID, FK_LAST(fk, drep)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			0x0badf00dULL);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void new_req_from_a_busy_qp_is_stale(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	/* Same QPN and CA GUID, another comm ID: the old one is stale. */
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk->sent[1].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[1].mad.rej),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, &fk->sent[1].mad.rej),
			(u64)FK_PEER_ID + 1);
	/* And the established connection is torn down with a DREQ. */
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
}

static void new_req_from_another_qp_is_a_new_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_passive_established(fk);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
}

static void qpn_is_free_again_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 4, IB_CM_REQ_RECEIVED);
}

static void rep_from_a_busy_qp_is_stale(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	/* A passive connection holds (FK_PEER_QPN, FK_PEER_GUID). */
	fk_passive_established(fk);
	id = fk_active_req_sent(fk);
	fk_rep(&mad, fk_local(id), FK_PEER_ID + 7, FK_PEER_QPN);
	fk_receive(fk, &mad);
	/* REP, REQ, then a REJ for the REP and a DREQ for the old one. */
	FK_EXPECT_SENT(fk, 4, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk->sent[2].attr, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, &fk->sent[2].mad.rej),
			(u64)IB_CM_REJ_STALE_CONN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, &fk->sent[2].mad.rej),
			(u64)FK_PEER_ID + 7);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREQ_REMOTE_COMM_ID, &fk->sent[3].mad.dreq),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_RCVD);
	KUNIT_EXPECT_NE(test, (int)fk_last_event(fk)->type,
			(int)IB_CM_REP_RECEIVED);
}

static void our_timeout_rej_names_our_guid(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	__be64 guid;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 2, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, FK_LAST(fk, rej)),
			8ULL);
	memcpy(&guid, IBA_GET_MEM_PTR(CM_REJ_ARI, FK_LAST(fk, rej)), 8);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(guid), FK_OUR_GUID);
}

static struct kunit_case fk_dup_cases[] = {
	KUNIT_CASE(repeated_req_while_pending_is_counted_only),
	KUNIT_CASE(repeated_req_after_rep_is_ignored),
	KUNIT_CASE(repeated_req_in_timewait_gets_stale_conn),
	KUNIT_CASE(repeated_rep_when_established_resends_the_rtu),
	KUNIT_CASE(repeated_rep_while_deciding_is_counted_only),
	KUNIT_CASE(repeated_rep_after_mra_resends_the_mra),
	KUNIT_CASE(repeated_dreq_in_timewait_resends_the_drep),
	KUNIT_CASE(destroyed_id_in_timewait_leaves_a_small_record),
	KUNIT_CASE(timewait_from_a_huge_ack_timeout_is_cut),
	KUNIT_CASE(timewait_records_are_bounded),
	KUNIT_CASE(listing_shows_ids_and_records),
	KUNIT_CASE(one_address_handle_serves_a_connection),
	KUNIT_CASE(a_passive_connection_makes_one_address_handle),
	KUNIT_CASE(device_removal_destroys_live_handles),
	KUNIT_CASE(repeated_dreq_before_the_drep_is_counted_only),
	KUNIT_CASE(dreq_for_a_forgotten_connection_gets_a_drep),
	KUNIT_CASE(new_req_from_a_busy_qp_is_stale),
	KUNIT_CASE(new_req_from_another_qp_is_a_new_connection),
	KUNIT_CASE(qpn_is_free_again_in_timewait),
	KUNIT_CASE(rep_from_a_busy_qp_is_stale),
	KUNIT_CASE(our_timeout_rej_names_our_guid),
	{}
};

static struct kunit_suite fk_dup_suite = {
	.name = "ib_cm_duplicates",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_dup_cases,
};

kunit_test_suite(fk_dup_suite);
