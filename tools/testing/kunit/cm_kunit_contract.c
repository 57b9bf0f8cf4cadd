// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_contract: the handler contract
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

static void nonzero_return_from_req_destroys_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_REQ_RECEIVED] = 1;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	/* The peer hears a REJ; only the listener is left. */
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	/* The REQ can come again and find the listener. */
	fk->ret_for[IB_CM_REQ_RECEIVED] = 0;
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
}

/* -ENOMEM from the REQ callback: no REJ, so that the peer may retry. */
static void enomem_from_req_destroys_without_rej(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_REQ_RECEIVED] = -ENOMEM;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	/* The retried REQ is a new connection, not a duplicate. */
	fk->ret_for[IB_CM_REQ_RECEIVED] = 0;
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 0L);
}

static void nonzero_return_from_sidr_req_destroys_the_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->ret_for[IB_CM_SIDR_REQ_RECEIVED] = 1;
	fk_sidr_req(&mad, 0x99, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	fk_disown(fk, fk_last_event(fk)->id);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
			(u64)IB_SIDR_REJECT);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void nonzero_return_from_rep_rejects_and_destroys(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_REP_RECEIVED] = -EINVAL;
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	fk_disown(fk, id);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	FK_EXPECT_SENT(fk, 2, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void nonzero_return_from_dreq_answers_and_destroys(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk->ret_for[IB_CM_DREQ_RECEIVED] = 1;
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_disown(fk, id);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	/* The id lingers in timewait for late DREQs, then goes. */
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void handler_swapped_in_req_callback_gets_the_rest(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk->swap_on_req = true;
	id = fk_passive_req_rcvd(fk);
	KUNIT_EXPECT_PTR_EQ(test, (void *)id->cm_handler, (void *)fk_handler2);
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk->ret_for[IB_CM_RTU_RECEIVED] = 1;	/* fk_handler2 ignores it */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void context_changed_between_events_is_seen(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;
	int marker;

	id->context = &marker;
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->context, (void *)&marker);
	id->context = fk;
}

/* The consumer destroys the id in its handler and frees its context. */
static void fk_destroy_and_free(struct fk *fk, struct ib_cm_id *id,
				const struct ib_cm_event *e)
{
	if (e->event != IB_CM_DREQ_RECEIVED)
		return;
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	kfree(id->context);	/* the id is gone as far as it knows */
}

static void destroy_from_own_callback_is_deferred(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;
	unsigned int sent, events;

	/* A context of its own that the handler frees (KASAN watches). */
	id->context = kzalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, id->context);
	fk->hook = fk_destroy_and_free;
	sent = fk->nsent;
	events = fk->nevents;
	kunit_warning_suppress(test) {
		fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	/*
	 * Destroyed when the handler returned: DREQ_RCVD answers a DREP, and
	 * the id, in timewait, gave way to a record (so it is not read: it
	 * is freed after a grace period).
	 */
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, sent + 1, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_GT(test, fk_record_left(local), 0L);
	/* No further callback: a repeated DREQ is answered unseen. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	FK_EXPECT_SENT(fk, sent + 2, CM_DREP_ATTR_ID);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, events + 1, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

/* Destroy in the handler, and a non-zero return besides: destroyed once. */
static void fk_destroy_and_fail(struct fk *fk, struct ib_cm_id *id,
				const struct ib_cm_event *e)
{
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
}

static void destroy_in_callback_and_nonzero_return_destroy_once(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk->hook = fk_destroy_and_fail;
	fk->ret_for[IB_CM_REQ_RECEIVED] = -EINVAL;
	kunit_warning_suppress(test) {
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);	/* the listener */
}

/* The new id a listener hands over is referenced by more than its user. */
static void fk_count_refs(struct fk *fk, struct ib_cm_id *id,
			  const struct ib_cm_event *e)
{
	if (e->event == IB_CM_REQ_RECEIVED ||
	    e->event == IB_CM_SIDR_REQ_RECEIVED)
		fk->seen = refcount_read(&to_priv(id)->refcount);
}

static void handed_over_id_holds_a_reference_of_its_own(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	/*
	 * The consumer's reference may go (another thread destroying the id)
	 * while the hand-over still wakes waiters: the CM holds one more.
	 */
	fk_listen(fk);
	fk->hook = fk_count_refs;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_GE(test, fk->seen, 2);
	fk->seen = 0;
	fk_sidr_req(&mad, FK_PEER_ID, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_GE(test, fk->seen, 2);
}

/* A sharer lets go of its listener inside a new id's callback. */
static void fk_drop_share(struct fk *fk, struct ib_cm_id *id,
			  const struct ib_cm_event *e)
{
	struct ib_cm_id *listen = e->param.req_rcvd.listen_id;

	if (e->event == IB_CM_REQ_RECEIVED && fk->seen++ == 0)
		ib_destroy_cm_id(listen);
}

static void shared_listener_share_dropped_in_a_callback(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *a, *b;
	union cm_kunit_msg mad;

	a = ib_cm_insert_listen(fk->dev, fk_handler, cpu_to_be64(FK_SID));
	b = ib_cm_insert_listen(fk->dev, fk_handler, cpu_to_be64(FK_SID));
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	KUNIT_ASSERT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 2);
	fk->hook = fk_drop_share;
	kunit_warning_suppress(test) {
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
		fk_receive(fk, &mad);
		KUNIT_EXPECT_SUPPRESSED_WARNING_COUNT(test, 0);
	}
	/* The share is dropped at once; the listener lives on for the other. */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, to_priv(a)->listen_sharecount, 1);
	KUNIT_EXPECT_EQ(test, a->state, IB_CM_LISTEN);
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	fk_destroy(fk, a);
}

struct fk_enomem_case {
	const char *desc;
	enum ib_cm_event_type on;	/* the event the handler fails */
	bool mra_first;			/* ib_prepare_cm_mra() before failing */
	enum ib_cm_state state;		/* the state it fails in */
	bool rej;			/* a REJ goes out */
};

static const struct fk_enomem_case fk_enomem_cases[] = {
	{ .desc = "REQ_RCVD: silent, the peer retries",
	  .on = IB_CM_REQ_RECEIVED, .state = IB_CM_REQ_RCVD },
	{ .desc = "MRA_REQ_SENT: rejected", .on = IB_CM_REQ_RECEIVED,
	  .mra_first = true, .state = IB_CM_MRA_REQ_SENT, .rej = true },
	{ .desc = "REP_RCVD: rejected", .on = IB_CM_REP_RECEIVED,
	  .state = IB_CM_REP_RCVD, .rej = true },
	{ .desc = "MRA_REP_SENT: rejected", .on = IB_CM_REP_RECEIVED,
	  .mra_first = true, .state = IB_CM_MRA_REP_SENT, .rej = true },
};

static void fk_enomem_desc(const struct fk_enomem_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_enomem, fk_enomem_cases, fk_enomem_desc);

static void fk_mra_then_fail(struct fk *fk, struct ib_cm_id *id,
			     const struct ib_cm_event *e)
{
	fk->seen = ib_prepare_cm_mra(id);
}

/* -ENOMEM keeps the peer's REQ unanswered only while nothing else went out. */
static void enomem_rejects_past_the_req(struct kunit *test)
{
	const struct fk_enomem_case *c = test->param_value;
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	unsigned int sent;

	if (c->mra_first)
		fk->hook = fk_mra_then_fail;
	fk->ret_for[c->on] = -ENOMEM;
	if (c->on == IB_CM_REQ_RECEIVED) {
		fk_listen(fk);
		sent = fk->nsent;
		fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	} else {
		struct ib_cm_id *id = fk_active_req_sent(fk);

		sent = fk->nsent;
		fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	}
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, c->on);
	fk_disown(fk, fk_last_event(fk)->id);
	/* ib_prepare_cm_mra() took the id to c->state first. */
	KUNIT_EXPECT_EQ(test, fk->seen, 0);
	if (c->rej) {
		FK_EXPECT_SENT(fk, sent + 1, CM_REJ_ATTR_ID);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
				(u64)IB_CM_REJ_CONSUMER_DEFINED);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
				c->state == IB_CM_MRA_REQ_SENT ?
				(u64)CM_MSG_RESPONSE_REQ :
				(u64)CM_MSG_RESPONSE_REP);
	} else {
		FK_EXPECT_SENT(fk, sent, 0);
	}
}

/* The MAD layer never completes the REQ: destroy still returns, id gone. */
static void destroy_does_not_wait_for_a_lost_completion(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);

	KUNIT_ASSERT_NOT_NULL(test, req);
	fk_disown(fk, id);
	ib_destroy_cm_id(id);
	fk_flush();
	/* The REQ is still outstanding; the id let go of it. */
	KUNIT_EXPECT_TRUE(test, req->cancelled);
	KUNIT_EXPECT_NULL(test, req->buf.context[0]);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
	/* Its completion, whenever it comes, frees only the buffer. */
	fk_complete(fk, req, IB_WC_WR_FLUSH_ERR);
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void no_event_after_destroy_returns(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	u32 local = fk_local(id);
	union cm_kunit_msg mad;

	fk_destroy(fk, id);
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	/* The DREP and a DREQ from the peer reach no handler. */
	fk_conn_msg(&mad, CM_DREP_ATTR_ID, local, FK_PEER_ID);
	fk_receive(fk, &mad);
	fk_dreq(&mad, local, FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	/* The late DREQ was still answered. */
	FK_EXPECT_SENT(fk, 4, CM_DREP_ATTR_ID);
}

static void listener_destroy_leaves_new_ids_alone(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	fk_destroy(fk, listen);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_SENT);
}

static struct kunit_case fk_contract_cases[] = {
	KUNIT_CASE(nonzero_return_from_req_destroys_the_new_id),
	KUNIT_CASE(enomem_from_req_destroys_without_rej),
	KUNIT_CASE(nonzero_return_from_sidr_req_destroys_the_new_id),
	KUNIT_CASE(nonzero_return_from_rep_rejects_and_destroys),
	KUNIT_CASE(nonzero_return_from_dreq_answers_and_destroys),
	KUNIT_CASE(handler_swapped_in_req_callback_gets_the_rest),
	KUNIT_CASE(context_changed_between_events_is_seen),
	KUNIT_CASE(destroy_from_own_callback_is_deferred),
	KUNIT_CASE(destroy_in_callback_and_nonzero_return_destroy_once),
	KUNIT_CASE(handed_over_id_holds_a_reference_of_its_own),
	KUNIT_CASE(shared_listener_share_dropped_in_a_callback),
	KUNIT_CASE_PARAM(enomem_rejects_past_the_req, fk_enomem_gen_params),
	KUNIT_CASE(no_event_after_destroy_returns),
	KUNIT_CASE(destroy_does_not_wait_for_a_lost_completion),
	KUNIT_CASE(listener_destroy_leaves_new_ids_alone),
	{}
};

static struct kunit_suite fk_contract_suite = {
	.name = "ib_cm_contract",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_contract_cases,
};

kunit_test_suite(fk_contract_suite);
