// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_states: every state destroyed, and timed out
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

/*
 * A destroyed id retries its DREQ, silently: a peer that lost the first
 * is not left waiting for a disconnect.  The DREP, the peer's own DREQ
 * (answered by the CM), the last retry or a flush (the device going away)
 * ends it in a timewait record.
 */
static const char * const fk_dreq_ends[] = {
	"the DREP", "the peer's DREQ", "the last retry",
	"a flush (the device goes)",
};

static void fk_dreq_end_desc(const char * const *end, char *desc)
{
	strscpy(desc, *end, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_dreq_end, fk_dreq_ends, fk_dreq_end_desc);

static void destroy_retries_the_dreq_until_it_is_answered(struct kunit *test)
{
	const char * const *end = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	unsigned int events = fk->nevents, ids = fk_ids_on_device(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;
	struct fk_msg *m;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, fk->nsent, CM_DREQ_ATTR_ID);
	/* Outside the CM agent's flow-control window. */
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_GT(test, m->buf.retries, 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);

	switch (end - fk_dreq_ends) {
	case 0:
		fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, FK_PEER_ID);
		fk_receive(fk, &mad);
		break;
	case 1:
		fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		FK_EXPECT_SENT(fk, fk->nsent, CM_DREP_ATTR_ID);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
				(u64)local);
		break;
	case 2:
		KUNIT_EXPECT_TRUE(test, fk_time_out(fk));
		break;
	default:
		fk_complete(fk, m, IB_WC_WR_FLUSH_ERR);
		fk_settle(fk);
		break;
	}
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 1);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);
	KUNIT_EXPECT_EQ(test, fk->nevents, events);
	fk_end_timewaits(fk);
}

static struct ib_cm_id *fk_reach(struct fk *fk, enum ib_cm_state state)
{
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	switch (state) {
	case IB_CM_IDLE:
		return fk_new_id(fk);
	case IB_CM_LISTEN:
		return fk_listen(fk);
	case IB_CM_REQ_SENT:
		return fk_active_req_sent(fk);
	case IB_CM_REQ_RCVD:
		return fk_passive_req_rcvd(fk);
	case IB_CM_MRA_REQ_SENT:
		id = fk_passive_req_rcvd(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_prepare_cm_mra(id), 0);
		return id;
	case IB_CM_MRA_REQ_RCVD:
		id = fk_active_req_sent(fk);
		fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ, 20);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_REP_SENT:
		return fk_passive_rep_sent(fk);
	case IB_CM_MRA_REP_RCVD:
		id = fk_passive_rep_sent(fk);
		fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 20);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_REP_RCVD:
		return fk_active_rep_rcvd(fk);
	case IB_CM_MRA_REP_SENT:
		id = fk_active_rep_rcvd(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_prepare_cm_mra(id), 0);
		return id;
	case IB_CM_ESTABLISHED:
		return fk_active_established(fk);
	case IB_CM_DREQ_SENT:
		id = fk_active_established(fk);
		KUNIT_ASSERT_EQ(fk->test, ib_send_cm_dreq(id, NULL, 0), 0);
		fk_settle(fk);
		return id;
	case IB_CM_DREQ_RCVD:
		id = fk_active_established(fk);
		fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		return id;
	case IB_CM_TIMEWAIT:
		id = fk_active_established(fk);
		fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		KUNIT_ASSERT_EQ(fk->test, ib_send_cm_drep(id, NULL, 0), 0);
		fk_settle(fk);
		return id;
	case IB_CM_SIDR_REQ_SENT:
		id = fk_new_id(fk);
		KUNIT_ASSERT_EQ(fk->test, fk_send_sidr_req(id), 0);
		return id;
	case IB_CM_SIDR_REQ_RCVD:
		fk_listen(fk);
		fk_sidr_req(&mad, 0x55, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_ASSERT_EQ(fk->test, fk->nevents, 1U);
		return fk_last_event(fk)->id;
	}
	return NULL;
}

struct fk_destroy_case {
	enum ib_cm_state state;
	__be16 sends;		/* attribute of what destroy sends, or 0 */
	u16 rej_reason;		/* for a REJ */
	u8 sidr_status;		/* for a SIDR_REP */
	bool timewait;		/* the id lingers in timewait */
	bool anonymous;		/* REJ of a REQ: local comm ID 0, as stock */
	bool retried;		/* its DREQ is retried until the DREP */
};

static const struct fk_destroy_case fk_destroy_cases[] = {
	{ .state = IB_CM_IDLE },
	{ .state = IB_CM_LISTEN },
	{ .state = IB_CM_REQ_SENT, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_TIMEOUT },
	{ .state = IB_CM_MRA_REQ_RCVD, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_TIMEOUT },
	{ .state = IB_CM_REQ_RCVD, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED, .anonymous = true },
	{ .state = IB_CM_MRA_REQ_SENT, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED },
	{ .state = IB_CM_REP_SENT, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED, .timewait = true },
	{ .state = IB_CM_MRA_REP_RCVD, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED, .timewait = true },
	{ .state = IB_CM_REP_RCVD, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED },
	{ .state = IB_CM_MRA_REP_SENT, .sends = CM_REJ_ATTR_ID,
	  .rej_reason = IB_CM_REJ_CONSUMER_DEFINED },
	{ .state = IB_CM_ESTABLISHED, .sends = CM_DREQ_ATTR_ID,
	  .timewait = true, .retried = true },
	{ .state = IB_CM_DREQ_SENT, .timewait = true, .retried = true },
	{ .state = IB_CM_DREQ_RCVD, .sends = CM_DREP_ATTR_ID,
	  .timewait = true },
	{ .state = IB_CM_TIMEWAIT, .timewait = true },
	{ .state = IB_CM_SIDR_REQ_SENT },
	{ .state = IB_CM_SIDR_REQ_RCVD, .sends = CM_SIDR_REP_ATTR_ID,
	  .sidr_status = IB_SIDR_REJECT },
};

static void fk_destroy_desc(const struct fk_destroy_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_destroy, fk_destroy_cases, fk_destroy_desc);

static void destroy_tells_the_peer_what_it_needs(struct kunit *test)
{
	const struct fk_destroy_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int sent, events, ids;
	__be32 remote;
	u32 local;

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_ASSERT_EQ(test, id->state, c->state);
	local = fk_local(id);
	remote = id->remote_id;
	sent = fk->nsent;
	events = fk->nevents;
	ids = fk_ids_on_device(fk);

	fk_destroy(fk, id);
	if (c->sends) {
		FK_EXPECT_SENT(fk, sent + 1, c->sends);
		if (c->sends == CM_REJ_ATTR_ID)
			KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
					(u64)c->rej_reason);
		if (c->sends == CM_SIDR_REP_ATTR_ID)
			KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
					(u64)c->sidr_status);
		if (c->sends != CM_SIDR_REP_ATTR_ID)
			KUNIT_EXPECT_EQ(test, fk_sent_local_id(fk_last(fk)),
					c->anonymous ? 0U : local);
	} else {
		FK_EXPECT_SENT(fk, sent, 0);
	}
	if (c->retried) {
		union cm_kunit_msg mad;

		/* Only the DREQ is retried for a destroyed id, until... */
		KUNIT_EXPECT_NOT_NULL(test, fk_tracked(fk));
		fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, be32_to_cpu(remote));
		fk_receive(fk, &mad);
	}
	/* Nothing is retried for a destroyed id... */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	/* ...it is gone, a small record waiting out timewait instead... */
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), ids - 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records),
			c->timewait ? 1 : 0);
	KUNIT_EXPECT_EQ(test, cm_is_timewait_record(cpu_to_be32(local), remote),
			c->timewait);
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm.timewait_records), 0);
	/* ...and its handler hears nothing more, timewait's end included. */
	KUNIT_EXPECT_EQ(test, fk->nevents, events);
}

struct fk_timeout_case {
	enum ib_cm_state state;
	enum ib_cm_event_type event;
	enum ib_cm_state after;
};

static const struct fk_timeout_case fk_timeout_cases[] = {
	{ .state = IB_CM_REQ_SENT, .event = IB_CM_REQ_ERROR,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REQ_RCVD, .event = IB_CM_REQ_ERROR,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_SENT, .event = IB_CM_REP_ERROR,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REP_RCVD, .event = IB_CM_REP_ERROR,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_DREQ_SENT, .event = IB_CM_DREQ_ERROR,
	  .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_SIDR_REQ_SENT, .event = IB_CM_SIDR_REQ_ERROR,
	  .after = IB_CM_IDLE },
};

static void fk_timeout_desc(const struct fk_timeout_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_timeout, fk_timeout_cases, fk_timeout_desc);

static void waiting_state_times_out_with_its_error(struct kunit *test)
{
	const struct fk_timeout_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, events + 1, c->event);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

/* States that wait for the consumer or the peer without a timer. */
static const enum ib_cm_state fk_untimed_states[] = {
	IB_CM_IDLE, IB_CM_LISTEN, IB_CM_REQ_RCVD, IB_CM_MRA_REQ_SENT,
	IB_CM_REP_RCVD, IB_CM_MRA_REP_SENT, IB_CM_ESTABLISHED,
	IB_CM_DREQ_RCVD,
};

KUNIT_ARRAY_PARAM(fk_untimed, fk_untimed_states, cm_kunit_state_desc);

static void consumer_states_have_nothing_to_time_out(struct kunit *test)
{
	const enum ib_cm_state *s = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, *s);

	KUNIT_ASSERT_EQ(test, id->state, *s);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	fk_end_timewaits(fk);
	KUNIT_EXPECT_EQ(test, id->state, *s);
}

struct fk_rx_case {
	enum ib_cm_state state;
	u16 reason;		/* REJ only */
	bool delivered;		/* the handler hears of it */
	enum ib_cm_state after;
};

static void fk_rx_desc(const struct fk_rx_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s%s", cm_state_names[c->state],
		 c->reason == IB_CM_REJ_STALE_CONN ? " stale" : "");
}

static const struct fk_rx_case fk_rej_cases[] = {
	{ .state = IB_CM_REQ_SENT, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_REQ_SENT, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REQ_RCVD, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REQ_RCVD, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REQ_SENT, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REP_RCVD, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_REQ_RCVD, .reason = IB_CM_REJ_TIMEOUT,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REQ_SENT, .reason = IB_CM_REJ_TIMEOUT,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_SENT, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_SENT, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_REQ_RCVD, .reason = IB_CM_REJ_STALE_CONN,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REP_RCVD, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_RCVD, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REP_SENT, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_ESTABLISHED, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_DREQ_SENT, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .delivered = true, .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_DREQ_RCVD, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .after = IB_CM_DREQ_RCVD },
	{ .state = IB_CM_TIMEWAIT, .reason = IB_CM_REJ_CONSUMER_DEFINED,
	  .after = IB_CM_TIMEWAIT },
};

KUNIT_ARRAY_PARAM(fk_rej, fk_rej_cases, fk_rx_desc);

/* A REJ in every state: idle, timewait, or ignored. */
static void rej_received_in_each_state(struct kunit *test)
{
	const struct fk_rx_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	__be64 guid = cpu_to_be64(FK_PEER_GUID);
	unsigned int events;
	union cm_kunit_msg mad;
	u8 rejected;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	switch (c->state) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
		rejected = CM_MSG_RESPONSE_REQ;
		break;
	case IB_CM_REP_SENT:
	case IB_CM_MRA_REP_RCVD:
		rejected = CM_MSG_RESPONSE_REP;
		break;
	default:
		rejected = CM_MSG_RESPONSE_OTHER;
		break;
	}
	fk_rej(&mad, fk_local(id), FK_PEER_ID, rejected, c->reason);
	if (c->reason == IB_CM_REJ_TIMEOUT) {
		/* A timed-out active side names itself by its GUID. */
		IBA_SET(CM_REJ_REMOTE_COMM_ID, &mad.rej, 0);
		IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, sizeof(guid));
		memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad.rej), &guid, sizeof(guid));
	}
	fk_receive(fk, &mad);
	if (c->delivered) {
		FK_EXPECT_EVENT(fk, events + 1, IB_CM_REJ_RECEIVED);
		KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason, (int)c->reason);
	} else {
		FK_EXPECT_EVENT(fk, events, FK_ANY);
	}
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

struct fk_dreq_case {
	enum ib_cm_state state;
	enum ib_cm_state after;
	__be16 answer;		/* what goes out at once, or 0 */
	bool delivered;
	bool duplicate;
};

static const struct fk_dreq_case fk_dreq_cases[] = {
	/* Our REQ is unanswered: the DREQ names no connection we know. */
	{ .state = IB_CM_REQ_SENT, .after = IB_CM_REQ_SENT,
	  .answer = CM_DREP_ATTR_ID, .duplicate = true },
	{ .state = IB_CM_REP_RCVD, .after = IB_CM_REP_RCVD },
	{ .state = IB_CM_REP_SENT, .after = IB_CM_DREQ_RCVD,
	  .delivered = true },
	{ .state = IB_CM_MRA_REP_RCVD, .after = IB_CM_DREQ_RCVD,
	  .delivered = true },
	{ .state = IB_CM_ESTABLISHED, .after = IB_CM_DREQ_RCVD,
	  .delivered = true },
	{ .state = IB_CM_DREQ_SENT, .after = IB_CM_DREQ_RCVD,
	  .delivered = true },
	{ .state = IB_CM_DREQ_RCVD, .after = IB_CM_DREQ_RCVD,
	  .duplicate = true },
	{ .state = IB_CM_TIMEWAIT, .after = IB_CM_TIMEWAIT,
	  .answer = CM_DREP_ATTR_ID, .duplicate = true },
};

static void fk_dreq_desc(const struct fk_dreq_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_dreq, fk_dreq_cases, fk_dreq_desc);

/* A DREQ in every state that has a peer to send one. */
static void dreq_received_in_each_state(struct kunit *test)
{
	const struct fk_dreq_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events, sent;
	long dups;
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	sent = fk->nsent;
	dups = fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, events + c->delivered,
			c->delivered ? IB_CM_DREQ_RECEIVED : FK_ANY);
	FK_EXPECT_SENT(fk, sent + !!c->answer, c->answer);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_DREQ_ATTR_ID),
			dups + c->duplicate);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	/* An answered DREQ leaves nothing to retry. */
	if (c->delivered)
		KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

struct fk_user_rej_case {
	enum ib_cm_state state;
	u8 rejected;		/* MESSAGE_REJECTED of the REJ */
	enum ib_cm_state after;
};

static const struct fk_user_rej_case fk_user_rej_cases[] = {
	{ .state = IB_CM_REQ_SENT, .rejected = CM_MSG_RESPONSE_OTHER,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REQ_RCVD, .rejected = CM_MSG_RESPONSE_OTHER,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_REQ_RCVD, .rejected = CM_MSG_RESPONSE_REQ,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REQ_SENT, .rejected = CM_MSG_RESPONSE_REQ,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_RCVD, .rejected = CM_MSG_RESPONSE_REP,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_MRA_REP_SENT, .rejected = CM_MSG_RESPONSE_REP,
	  .after = IB_CM_IDLE },
	{ .state = IB_CM_REP_SENT, .rejected = CM_MSG_RESPONSE_OTHER,
	  .after = IB_CM_TIMEWAIT },
	{ .state = IB_CM_MRA_REP_RCVD, .rejected = CM_MSG_RESPONSE_OTHER,
	  .after = IB_CM_TIMEWAIT },
};

static void fk_user_rej_desc(const struct fk_user_rej_case *c, char *desc)
{
	strscpy(desc, cm_state_names[c->state], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_user_rej, fk_user_rej_cases, fk_user_rej_desc);

/* ib_send_cm_rej() in every state that allows it. */
static void user_rej_in_each_state(struct kunit *test)
{
	const struct fk_user_rej_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, c->state);
	unsigned int events, sent;

	KUNIT_ASSERT_EQ(test, id->state, c->state);
	events = fk->nevents;
	sent = fk->nsent;
	KUNIT_ASSERT_EQ(test, ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED,
					     NULL, 0, fk_pdata, 8), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, sent + 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)c->rejected);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REJ_PRIVATE_DATA, FK_LAST(fk, rej)),
				     fk_pdata, 8), 0);
	KUNIT_EXPECT_EQ(test, id->state, c->after);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, events, FK_ANY);
}

static void drep_after_crossed_dreqs_ends_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_DREQ_SENT);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	/* The peer answers our DREQ before we answer its own. */
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
}

static void prepared_mra_answers_a_repeated_lap(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->lap_state, IB_CM_LAP_RCVD);
	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_MRA_LAP_SENT);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 3, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_OTHER);
	FK_EXPECT_EVENT(fk, 2, IB_CM_LAP_RECEIVED);
	/* While the LAP is pending, path migration is refused. */
	KUNIT_EXPECT_NE(test, ib_cm_notify(id, IB_EVENT_PATH_MIG), 0);
}

static void comm_est_after_an_mra_for_the_rep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_MRA_REP_RCVD);

	KUNIT_ASSERT_EQ(test, id->state, IB_CM_MRA_REP_RCVD);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void dreq_that_cannot_be_posted_goes_to_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	fk->post_ret = -ENOMEM;
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -ENOMEM);
	fk->post_ret = 0;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_TIMEWAIT_EXIT);
}

static void req_that_cannot_be_posted_leaves_the_id_idle(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);

	fk->post_ret = -EAGAIN;
	KUNIT_EXPECT_EQ(test, fk_send_req(id), -EAGAIN);
	fk->post_ret = 0;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

static void unroutable_req_and_sidr_req_are_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->wc_ret = -EHOSTUNREACH;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	fk_sidr_req(&mad, 0x31, FK_SID);
	fk_receive(fk, &mad);
	fk->wc_ret = 0;
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 2L);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 2U);
}

static void xrc_target_is_destroyed_without_dreq(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, &mad.req, CM_REQ_TRANSPORT_EXTENDED);
	IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, &mad.req, CM_REQ_EXT_TRANSPORT_XRC);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	/* An XRC target's QPN travels in the EECN field, with an SRQ. */
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, FK_LAST(fk, rep)),
			(u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_SRQ, FK_LAST(fk, rep)), 1ULL);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_ASSERT_EQ(test, id->state, IB_CM_ESTABLISHED);
	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void timewait_ends_in_idle_with_an_event(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_reach(fk, IB_CM_TIMEWAIT);
	unsigned int events = fk->nevents;

	KUNIT_ASSERT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	/* The id may connect again. */
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

static void send_error_other_than_timeout_is_reported(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	struct fk_msg *m;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	m = fk_tracked(fk);
	KUNIT_ASSERT_NOT_NULL(test, m);
	/* A transport error other than a timeout is reported the same way. */
	fk_complete(fk, m, IB_WC_GENERAL_ERR);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, (int)IB_WC_GENERAL_ERR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
}

static struct kunit_case fk_state_cases[] = {
	KUNIT_CASE_PARAM(destroy_retries_the_dreq_until_it_is_answered,
			 fk_dreq_end_gen_params),
	KUNIT_CASE_PARAM(destroy_tells_the_peer_what_it_needs,
			 fk_destroy_gen_params),
	KUNIT_CASE_PARAM(waiting_state_times_out_with_its_error,
			 fk_timeout_gen_params),
	KUNIT_CASE_PARAM(consumer_states_have_nothing_to_time_out,
			 fk_untimed_gen_params),
	KUNIT_CASE_PARAM(rej_received_in_each_state, fk_rej_gen_params),
	KUNIT_CASE_PARAM(dreq_received_in_each_state, fk_dreq_gen_params),
	KUNIT_CASE_PARAM(user_rej_in_each_state, fk_user_rej_gen_params),
	KUNIT_CASE(drep_after_crossed_dreqs_ends_in_timewait),
	KUNIT_CASE(prepared_mra_answers_a_repeated_lap),
	KUNIT_CASE(comm_est_after_an_mra_for_the_rep),
	KUNIT_CASE(dreq_that_cannot_be_posted_goes_to_timewait),
	KUNIT_CASE(req_that_cannot_be_posted_leaves_the_id_idle),
	KUNIT_CASE(unroutable_req_and_sidr_req_are_dropped),
	KUNIT_CASE(xrc_target_is_destroyed_without_dreq),
	KUNIT_CASE(timewait_ends_in_idle_with_an_event),
	KUNIT_CASE(send_error_other_than_timeout_is_reported),
	{}
};

static struct kunit_suite fk_state_suite = {
	.name = "ib_cm_states",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_state_cases,
};

kunit_test_suite(fk_state_suite);
