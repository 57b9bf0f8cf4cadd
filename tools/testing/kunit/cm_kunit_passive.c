// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_passive: the passive side
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

static void req_on_a_listener_hands_over_a_new_id(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	union cm_kunit_msg mad;
	struct fk_event *e;

	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	e = fk_last_event(fk);
	KUNIT_EXPECT_PTR_EQ(test, e->listen_id, listen);
	KUNIT_EXPECT_PTR_NE(test, e->id, listen);
	KUNIT_EXPECT_EQ(test, e->state, (int)IB_CM_REQ_RCVD);
	KUNIT_EXPECT_EQ(test, e->qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, e->pdata[0], 0xa5);
	/* The new id inherits the listener's handler and context. */
	KUNIT_EXPECT_PTR_EQ(test, e->context, (void *)fk);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(e->id->remote_id), FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(e->id->service_id), FK_SID);
	KUNIT_EXPECT_EQ(test, listen->state, IB_CM_LISTEN);
	FK_EXPECT_SENT(fk, 0, 0);
}

static void req_without_listener_is_rejected_with_reason_8(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID + 1);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_INVALID_SERVICE_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
}

static void invalid_req_is_dropped_and_counted(struct kunit *test)
{
	struct fk *fk = test->priv;
	long before = fk_drops(fk, CM_DROP_FIELD);
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, &mad.req, 0);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 0, 0);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), before + 1);
	KUNIT_EXPECT_EQ(test, fk->rx_freed, 1U);
}

static void rep_goes_out_on_the_send_only_agent(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg *rep;

	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	rep = &fk_last(fk)->mad;
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->send_only);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_COMM_ID, &rep->rep), fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_REMOTE_COMM_ID, &rep->rep),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_QPN, &rep->rep), (u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REP_LOCAL_CA_GUID, &rep->rep), FK_OUR_GUID);
	/* The transaction ID of the REQ is kept. */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rep->mad.mad_hdr.tid),
			0x7000ULL + FK_PEER_ID);
}

static void rtu_establishes_the_passive_side(struct kunit *test)
{
	struct fk *fk = test->priv;

	fk_passive_established(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
}

static void comm_est_establishes_before_the_rtu(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	fk_flush();
	fk_settle(fk);
	FK_EXPECT_EVENT(fk, 2, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* The late RTU changes nothing. */
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_USER_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* As with the stock CM: established at once, the event follows. */
static void comm_est_establishes_before_notify_returns(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	unsigned int events = fk->nevents;

	/* The event waits as if the id's worker were busy. */
	fk_hold(id);
	KUNIT_ASSERT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	/* The REP is not retried any more. */
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, ib_cm_notify(id, IB_EVENT_COMM_EST), -EISCONN);
	/*
	 * A disconnect right away is a normal one; the event, which comes
	 * after it, is not given, as the id is no longer established (as
	 * with the stock CM).
	 */
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_DREQ_SENT);
	fk_let_go(fk, id);
	FK_EXPECT_EVENT(fk, events, FK_ANY);
	FK_EXPECT_SENT(fk, 2, CM_DREQ_ATTR_ID);
}

/* An alternate GID alone, without a LID, is no alternate path (stock). */
static void req_with_an_alternate_gid_alone_has_no_alternate_path(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;
	union ib_gid *gid;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	gid = IBA_GET_MEM_PTR(CM_REQ_ALTERNATE_LOCAL_PORT_GID, &mad.req);
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = cpu_to_be64(FK_PEER_GUID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_FALSE(test, fk_last_event(fk)->alt_path);
	FK_EXPECT_SENT(fk, 0, 0);
}

static void rep_timeout_reports_rep_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);

	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 2, IB_CM_REP_ERROR);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status,
			(int)IB_WC_RESP_TIMEOUT_ERR);
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_SENT);
}

static void mra_for_the_rep_extends_its_timeout(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	struct fk_msg *rep = fk_tracked(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_NOT_NULL(test, rep);
	fk_mra(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP, 22);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REP_RCVD);
	FK_EXPECT_EVENT(fk, 2, IB_CM_MRA_RECEIVED);
	KUNIT_EXPECT_EQ(test, rep->timeout_ms,
			cm_iba_to_ms(22) + cm_iba_to_ms(to_priv(id)->av.timeout));
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
	FK_EXPECT_EVENT(fk, 3, IB_CM_RTU_RECEIVED);
}

static void prepared_mra_answers_a_repeated_req(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, ib_prepare_cm_mra(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_MRA_REQ_SENT);
	FK_EXPECT_SENT(fk, 0, 0);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_SENT(fk, 1, CM_MRA_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->resent);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_MESSAGE_MRAED, FK_LAST(fk, mra)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_REMOTE_COMM_ID, FK_LAST(fk, mra)),
			(u64)FK_PEER_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_MRA_SERVICE_TIMEOUT, FK_LAST(fk, mra)),
			(u64)CM_MRA_SERVICE_TIMEOUT_VALUE);
	KUNIT_EXPECT_EQ(test, fk_count(fk, CM_RECV_DUPLICATES, CM_REQ_ATTR_ID), 1L);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	/* The REP may still follow. */
	KUNIT_EXPECT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_SENT);
}

static void rej_from_the_passive_side(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_req_rcvd(fk);

	KUNIT_ASSERT_EQ(test, ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED,
					     NULL, 0, fk_pdata, 4), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_MESSAGE_REJECTED, FK_LAST(fk, rej)),
			(u64)CM_MSG_RESPONSE_REQ);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void rej_of_our_rep_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_rep_sent(fk);
	union cm_kunit_msg mad;

	fk_rej(&mad, fk_local(id), FK_PEER_ID, CM_MSG_RESPONSE_REP,
	       IB_CM_REJ_CONSUMER_DEFINED);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REJ_RECEIVED);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_NE(test, id->state, IB_CM_REP_SENT);
}

static void dreq_from_the_active_side_ends_in_timewait(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_passive_established(fk);
	union cm_kunit_msg mad;

	fk_dreq(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 3, IB_CM_DREQ_RECEIVED);
	KUNIT_ASSERT_EQ(test, ib_send_cm_drep(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_TIMEWAIT);
	fk_end_timewaits(fk);
	FK_EXPECT_EVENT(fk, 4, IB_CM_TIMEWAIT_EXIT);
}

static const u8 fk_transports[] = {
	CM_REQ_TRANSPORT_RC, CM_REQ_TRANSPORT_UC, CM_REQ_TRANSPORT_EXTENDED,
};

static void fk_transport_desc(const u8 *t, char *desc)
{
	strscpy(desc, *t == CM_REQ_TRANSPORT_RC ? "RC" :
		*t == CM_REQ_TRANSPORT_UC ? "UC" : "XRC", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fk_transport, fk_transports, fk_transport_desc);

/* RC, UC and XRC connections are all accepted, each with its QP type. */
static void each_transport_connects(struct kunit *test)
{
	const u8 *t = test->param_value;
	static const int types[] = {
		[CM_REQ_TRANSPORT_RC] = IB_QPT_RC,
		[CM_REQ_TRANSPORT_UC] = IB_QPT_UC,
		[CM_REQ_TRANSPORT_EXTENDED] = IB_QPT_XRC_TGT,
	};
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, &mad.req, *t);
	if (*t == CM_REQ_TRANSPORT_EXTENDED)
		IBA_SET(CM_REQ_EXTENDED_TRANSPORT_TYPE, &mad.req, CM_REQ_EXT_TRANSPORT_XRC);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qp_type, types[*t]);
	id = fk_last_event(fk)->id;
	KUNIT_ASSERT_EQ(test, fk_send_rep(id), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_REP_ATTR_ID);
	fk_conn_msg(&mad, CM_RTU_ATTR_ID, fk_local(id), FK_PEER_ID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_RTU_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void req_with_an_alternate_path_sets_up_both(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, &mad.req, FK_PEER_LID + 1);
	IBA_SET(CM_REQ_ALTERNATE_REMOTE_PORT_LID, &mad.req, 2);
	IBA_SET(CM_REQ_ALTERNATE_SUBNET_LOCAL, &mad.req, 1);
	IBA_SET(CM_REQ_ALTERNATE_LOCAL_ACK_TIMEOUT, &mad.req, FK_LIFE + 1);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_TRUE(test, fk_last_event(fk)->alt_path);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_PTR_EQ(test, to_priv(id)->alt_av.port, fk->port);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&to_priv(id)->alt_av.ah_attr),
			FK_PEER_LID + 1);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&to_priv(id)->av.ah_attr),
			FK_PEER_LID);
	/* Without one, the alternate address stays empty. */
	fk_req(&mad, FK_PEER_ID + 1, FK_PEER_QPN + 1, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_REQ_RECEIVED);
	KUNIT_EXPECT_FALSE(test, fk_last_event(fk)->alt_path);
	KUNIT_EXPECT_NULL(test, to_priv(fk_last_event(fk)->id)->alt_av.port);
}

static void sidr_req_with_a_grh_remembers_the_gid(struct kunit *test)
{
	struct fk *fk = test->priv;
	union ib_gid gid = { .raw = { 0xfe, 0x80, [15] = 0x42 } };
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_listen(fk);
	fk_sidr_req(&mad, 0x61, FK_SID);
	fk_receive_grh(fk, &mad, &gid);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_EQ(test, memcmp(&to_priv(id)->sidr_gid, &gid, sizeof(gid)),
			0);
	/* The same request ID from another GID is another request. */
	gid.raw[15]++;
	fk_receive_grh(fk, &mad, &gid);
	FK_EXPECT_EVENT(fk, 2, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test,
			fk_count(fk, CM_RECV_DUPLICATES, CM_SIDR_REQ_ATTR_ID), 0L);
}

static void send_buffer_shortage_fails_the_call_only(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);

	fk->create_fails = true;
	KUNIT_EXPECT_EQ(test, ib_send_cm_rtu(id, NULL, 0), -ENOMEM);
	fk->create_fails = false;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
	FK_EXPECT_SENT(fk, 1, CM_REQ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, ib_send_cm_rtu(id, NULL, 0), 0);
	fk_settle(fk);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* A REQ whose path we cannot use: REJ INVALID_GID naming our GID. */
static void req_on_an_unusable_path_is_rejected(struct kunit *test)
{
	struct fk *fk = test->priv;
	union ib_gid ours;
	union cm_kunit_msg mad;

	fk_port_gid(fk->port, &ours);
	fk_listen(fk);
	fk->path_ret = -ENETUNREACH;
	fk_req(&mad, FK_PEER_ID, FK_PEER_QPN, FK_SID);
	fk_receive(fk, &mad);
	fk->path_ret = 0;
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_REJ_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REASON, FK_LAST(fk, rej)),
			(u64)IB_CM_REJ_INVALID_GID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REJECTED_INFO_LENGTH, FK_LAST(fk, rej)),
			(u64)sizeof(ours));
	KUNIT_EXPECT_EQ(test, memcmp(IBA_GET_MEM_PTR(CM_REJ_ARI, FK_LAST(fk, rej)),
				     &ours, sizeof(ours)), 0);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_REJ_REMOTE_COMM_ID, FK_LAST(fk, rej)),
			(u64)FK_PEER_ID);
	/* Nothing is left of the new id; the REQ may come again. */
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 1U);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REQ_RECEIVED);
}

static struct kunit_case fk_passive_cases[] = {
	KUNIT_CASE(req_on_a_listener_hands_over_a_new_id),
	KUNIT_CASE(req_without_listener_is_rejected_with_reason_8),
	KUNIT_CASE(invalid_req_is_dropped_and_counted),
	KUNIT_CASE(rep_goes_out_on_the_send_only_agent),
	KUNIT_CASE(rtu_establishes_the_passive_side),
	KUNIT_CASE(comm_est_establishes_before_the_rtu),
	KUNIT_CASE(comm_est_establishes_before_notify_returns),
	KUNIT_CASE(req_with_an_alternate_gid_alone_has_no_alternate_path),
	KUNIT_CASE(rep_timeout_reports_rep_error),
	KUNIT_CASE(mra_for_the_rep_extends_its_timeout),
	KUNIT_CASE(prepared_mra_answers_a_repeated_req),
	KUNIT_CASE(rej_from_the_passive_side),
	KUNIT_CASE(rej_of_our_rep_is_delivered),
	KUNIT_CASE(dreq_from_the_active_side_ends_in_timewait),
	KUNIT_CASE_PARAM(each_transport_connects, fk_transport_gen_params),
	KUNIT_CASE(req_with_an_alternate_path_sets_up_both),
	KUNIT_CASE(sidr_req_with_a_grh_remembers_the_gid),
	KUNIT_CASE(send_buffer_shortage_fails_the_call_only),
	KUNIT_CASE(req_on_an_unusable_path_is_rejected),
	{}
};

static struct kunit_suite fk_passive_suite = {
	.name = "ib_cm_passive",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_passive_cases,
};

kunit_test_suite(fk_passive_suite);
