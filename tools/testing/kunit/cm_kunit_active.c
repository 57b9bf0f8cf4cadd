// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_active: the active side
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

static void req_goes_out_with_our_ids_and_waits(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg *req;

	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	req = &fk->sent[0].mad;
	KUNIT_EXPECT_TRUE(test, fk->sent[0].tracked);
	KUNIT_EXPECT_FALSE(test, fk->sent[0].send_only);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_COMM_ID, &req->req), fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_SERVICE_ID, &req->req), FK_SID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_QPN, &req->req), FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_LOCAL_CA_GUID, &req->req), FK_OUR_GUID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, &req->req), 3ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_PRIMARY_REMOTE_PORT_LID, &req->req),
			(u64)FK_PEER_LID);
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REQ_PRIVATE_DATA, &req->req),
				     fk_pdata, sizeof(fk_pdata)), 0);
	KUNIT_EXPECT_NOT_NULL(test, fk_tracked(fk));
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 0L);
}

static void rep_is_delivered_and_stops_the_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	struct fk_event *e = fk_last_event(fk);

	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, e->id, id);
	KUNIT_EXPECT_PTR_EQ(test, e->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, e->pdata[0], 0x5a);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(id->remote_id), FK_PEER_ID);
	/* The REQ was cancelled and completed: nothing left to retry. */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV, CM_REP_ATTR_ID), 1L);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
}

static void rtu_completes_the_active_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	FK_EXPECT_SENT(fk, 2, CM_RTU_ATTR_ID);
	KUNIT_EXPECT_FALSE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_RTU_LOCAL_COMM_ID, FK_LAST(fk, rtu)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_RTU_REMOTE_COMM_ID, FK_LAST(fk, rtu)),
			FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_RTU_ATTR_ID), 1L);
}

static void rep_for_an_unknown_id_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	long before = fk_drops(fk, CM_DROP_UNMATCHED);
	union cm_kunit_msg mad;

	fk_rep(&mad, fk_local(id) ^ 0x00ff0000, FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_SENT);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_UNMATCHED), before + 1);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 1U);
}

static void mra_for_the_req_extends_its_timeout(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_NOT_NULL(test, req);
	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ, 24);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, req->timeout_ms,
			cm_iba_to_ms(24) + cm_iba_to_ms(FK_LIFE + 1));
	FK_EXPECT_EVENT(fk, 1, IB_CM_MRA_RECEIVED);
	/* A second one is a duplicate. */
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_MRA_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_MRA_RECEIVED);
	/* The REP still completes the exchange. */
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REP_RECEIVED);
}

static void mra_for_another_message_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 24);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REQ_SENT);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
}

static void req_timeout_reports_req_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);

	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	/* The REQ and its 3 retries were counted. */
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT, CM_REQ_ATTR_ID), 4L);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_XMIT_RETRIES, CM_REQ_ATTR_ID), 3L);
	/* The id is reusable. */
	KUNIT_EXPECT_EQ(test, fk_send_req(id), 0);
}

/*
 * The timeout of a retried send is reported without any allocation: with
 * the next allocation of this task set to fail, REQ_ERROR still comes, and
 * the failure was never used.
 */
static void req_timeout_needs_no_allocation(struct kunit *test)
{
#ifdef CONFIG_FAULT_INJECTION
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	struct fk_msg *req = fk_tracked(fk);

	KUNIT_ASSERT_NOT_NULL(test, req);
	req->buf.retries = to_priv(id)->max_cm_retries;
	current->fail_nth = 1;
	fk_complete(fk, req, IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_EQ(test, current->fail_nth, 1U);
	current->fail_nth = 0;
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
#else
	kunit_skip(test, "needs CONFIG_FAULT_INJECTION");
#endif
}

static void rej_in_req_sent_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_CONSUMER_DEFINED);
	memset(IBA_GET_MEM_PTR(CM_REJ_PRIVATE_DATA, &mad.rej), 0x77, FK_KEEP);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason,
			(int)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->pdata[0], 0x77);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void rej_timeout_carries_the_guid_as_ari(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	__be64 guid = cpu_to_be64(FK_PEER_GUID);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_TIMEOUT);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, sizeof(guid));
	memcpy(IBA_GET_MEM_PTR(CM_REJ_ARI, &mad.rej), &guid, sizeof(guid));
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason,
			(int)IB_CM_REJ_TIMEOUT);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->ari_length, 8);
	KUNIT_EXPECT_EQ(test, memcmp(fk_last_event(fk)->ari, &guid, 8), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void rej_with_oversized_ari_length_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_req_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REQ,
	       IB_CM_REJ_INVALID_GID);
	IBA_SET(CM_REJ_REJECTED_INFO_LENGTH, &mad.rej, 0x7f);
	fk_receive(fk, &mad);
	/*
	 * As with the stock CM, the REJ ends the connect at once; of the 127
	 * bytes of ARI it claims, the 72 the REJ has are passed on.
	 */
	FK_EXPECT_EVENT(fk, 1, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->reason, IB_CM_REJ_INVALID_GID);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->ari_length,
			IB_CM_REJ_ARI_LENGTH);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 0L);
}

/* Response timeouts above 31 are taken, as the stock CM takes them. */
static void req_response_timeouts_above_31_are_clamped(struct kunit *test)
{
	static const u8 timeouts[] = { 31, 32, 255 };
	struct fk *fk = test->priv;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		struct ib_cm_id *id = fk_new_id(fk);
		struct ib_cm_req_param param = {
			.primary_path = &fk_path,
			.service_id = cpu_to_be64(FK_SID),
			.qp_num = FK_OUR_QPN,
			.qp_type = IB_QPT_RC,
			.remote_cm_response_timeout = timeouts[i],
			.local_cm_response_timeout = timeouts[i],
			.max_cm_retries = 16,
			.retry_count = 8,
			.rnr_retry_count = 9,
		};
		union cm_kunit_msg *req;

		/* ib_srp asks for subnet_timeout + 2, up to 33. */
		KUNIT_ASSERT_EQ_MSG(test, ib_send_cm_req(id, &param), 0,
				    "timeout %u", timeouts[i]);
		req = &fk_last(fk)->mad;
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT,
					&req->req), 31ULL);
		KUNIT_EXPECT_EQ(test,
				IBA_GET(CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT,
					&req->req), 31ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_MAX_CM_RETRIES, &req->req),
				15ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RETRY_COUNT, &req->req),
				7ULL);
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_RNR_RETRY_COUNT, &req->req),
				7ULL);
		KUNIT_EXPECT_EQ(test, to_priv(id)->timeout_ms,
				2 * cm_iba_to_ms(FK_LIFE) + cm_iba_to_ms(31));
		fk_destroy(fk, id);
	}
}

static void rej_from_a_stranger_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	/* Our ID, but another peer's comm ID. */
	fk_rej(&mad, fk_local(id), FK_PEER_ID + 1, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void dreq_and_drep_pass_through_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, fk_pdata, 8), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	FK_EXPECT_SENT(fk, 3, CM_DREQ_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREQ_REMOTE_QPN_EECN, FK_LAST(fk, dreq)),
			(u64)FK_PEER_QPN);

	fk_conn_msg(&mad, CM_DREP_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));

	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void dreq_timeout_reports_dreq_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void dreq_received_is_answered_by_drep(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, fk_pdata, 4), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 3, CM_DREP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_DREP_LOCAL_COMM_ID, FK_LAST(fk, drep)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void dreq_for_another_qpn_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	long before = fk_drops(fk, CM_DROP_FIELD);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN + 1);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), before + 1);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

static void crossing_dreqs_both_end_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	fk_settle(fk);
	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_DREQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_RCVD);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 3, IB_CM_TIMEWAIT_EXIT);
}

static void rtu_is_not_accepted_on_the_active_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
}

struct fk_qp_case {
	enum ib_qp_type qp_type;
	u8 transport;		/* the REQ's transport service type */
	const char *name;
};

static const struct fk_qp_case fk_active_qp_cases[] = {
	{ .qp_type = IB_QPT_RC, .transport = CM_REQ_TRANSPORT_RC,
	  .name = "RC" },
	{ .qp_type = IB_QPT_UC, .transport = CM_REQ_TRANSPORT_UC,
	  .name = "UC" },
	{ .qp_type = IB_QPT_XRC_INI, .transport = CM_REQ_TRANSPORT_EXTENDED,
	  .name = "XRC" },
};

static void fk_qp_desc(const struct fk_qp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_active_qp, fk_active_qp_cases, fk_qp_desc);

/* Each QP type connects; an XRC target's QPN comes in the REP's EECN. */
static void each_qp_type_connects_from_the_active_side(struct kunit *test)
{
	const struct fk_qp_case *c = test->param_value;
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_req_type(id, c->qp_type), 0);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_TRANSPORT_SERVICE_TYPE, FK_LAST(fk, req)),
			(u64)c->transport);
	if (c->qp_type == IB_QPT_XRC_INI)
		KUNIT_EXPECT_EQ(test, IBA_GET(CM_REQ_EXTENDED_TRANSPORT_TYPE, FK_LAST(fk, req)),
				(u64)CM_REQ_EXT_TRANSPORT_XRC);
	fk_rep(&mad, fk_local(id), FK_PEER_ID, FK_PEER_QPN);
	if (c->qp_type == IB_QPT_XRC_INI) {
		IBA_SET(CM_REP_LOCAL_QPN, &mad.rep, 0);
		IBA_SET(CM_REP_LOCAL_EE_CONTEXT_NUMBER, &mad.rep, FK_PEER_QPN);
	}
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qpn, FK_PEER_QPN);
	KUNIT_ASSERT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static struct kunit_case fk_active_cases[] = {
	KUNIT_CASE(req_goes_out_with_our_ids_and_waits),
	KUNIT_CASE(rep_is_delivered_and_stops_the_req),
	KUNIT_CASE(rtu_completes_the_active_side),
	KUNIT_CASE(rep_for_an_unknown_id_is_dropped),
	KUNIT_CASE(mra_for_the_req_extends_its_timeout),
	KUNIT_CASE(mra_for_another_message_is_ignored),
	KUNIT_CASE(req_timeout_reports_req_error),
	KUNIT_CASE(req_timeout_needs_no_allocation),
	KUNIT_CASE(rej_in_req_sent_is_delivered),
	KUNIT_CASE(rej_timeout_carries_the_guid_as_ari),
	KUNIT_CASE(rej_with_oversized_ari_length_is_delivered),
	KUNIT_CASE(req_response_timeouts_above_31_are_clamped),
	KUNIT_CASE(rej_from_a_stranger_is_ignored),
	KUNIT_CASE(dreq_and_drep_pass_through_timewait),
	KUNIT_CASE(dreq_timeout_reports_dreq_error),
	KUNIT_CASE(dreq_received_is_answered_by_drep),
	KUNIT_CASE(dreq_for_another_qpn_is_dropped),
	KUNIT_CASE(crossing_dreqs_both_end_in_timewait),
	KUNIT_CASE(rtu_is_not_accepted_on_the_active_side),
	KUNIT_CASE_PARAM(each_qp_type_connects_from_the_active_side,
			 fk_active_qp_gen_params),
	{}
};

static struct kunit_suite fk_active_suite = {
	.name = "ib_cm_active",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_active_cases,
};

kunit_test_suite(fk_active_suite);
