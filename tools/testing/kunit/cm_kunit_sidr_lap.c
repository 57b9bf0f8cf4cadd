// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_sidr_lap: SIDR on both sides; LAP and APR received
 *
 * Driven through the fake transport of cm_kunit_fake.c.
 */

#include <kunit/test.h>

static void sidr_req_and_rep_resolve_a_service(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_SIDR_REQ_SENT);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REQ_ATTR_ID);
	KUNIT_EXPECT_TRUE(test, fk_last(fk)->tracked);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REQ_REQUESTID, FK_LAST(fk, sidr_req)),
			fk_local(id));
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REQ_SERVICEID, FK_LAST(fk, sidr_req)),
			FK_SID);
	fk_sidr_rep(&mad, fk_local(id), IB_SIDR_SUCCESS, FK_PEER_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, (int)IB_SIDR_SUCCESS);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->qpn, FK_PEER_QPN);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	/* A second SIDR_REP finds nothing. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
}

static void sidr_req_timeout_reports_sidr_req_error(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	KUNIT_ASSERT_TRUE(test, fk_time_out(fk));
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_ERROR);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void sidr_req_on_a_listener_is_answered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *listen = fk_listen(fk);
	struct ib_cm_sidr_rep_param rep = {
		.qp_num = FK_OUR_QPN, .qkey = 0x22222222,
		.status = IB_SIDR_SUCCESS,
	};
	struct ib_cm_id *id;
	union cm_kunit_msg mad;

	fk_sidr_req(&mad, 0x77, FK_SID);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_PTR_EQ(test, fk_last_event(fk)->listen_id, listen);
	id = fk_last_event(fk)->id;
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_SIDR_REQ_RCVD);

	/* Repeated while pending: a duplicate, no second id. */
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REQ_RECEIVED);
	KUNIT_EXPECT_EQ(test,
			fk_count(fk, CM_RECV_DUPLICATES, CM_SIDR_REQ_ATTR_ID), 1L);

	KUNIT_ASSERT_EQ(test, ib_send_cm_sidr_rep(id, &rep), 0);
	fk_settle(fk);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_REQUESTID, FK_LAST(fk, sidr_rep)),
			0x77ULL);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_QPN, FK_LAST(fk, sidr_rep)),
			(u64)FK_OUR_QPN);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_Q_KEY, FK_LAST(fk, sidr_rep)),
			0x22222222ULL);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
}

static void sidr_req_without_listener_is_unsupported(struct kunit *test)
{
	struct fk *fk = test->priv;
	union cm_kunit_msg mad;

	fk_sidr_req(&mad, 0x78, FK_SID + 5);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 0, FK_ANY);
	FK_EXPECT_SENT(fk, 1, CM_SIDR_REP_ATTR_ID);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_STATUS, FK_LAST(fk, sidr_rep)),
			(u64)IB_SIDR_UNSUPPORTED);
	KUNIT_EXPECT_EQ(test, IBA_GET(CM_SIDR_REP_REQUESTID, FK_LAST(fk, sidr_rep)),
			0x78ULL);
	KUNIT_EXPECT_EQ(test, fk_ids_on_device(fk), 0U);
}

static void lap_is_received_on_an_established_ib_connection(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 2, IB_CM_LAP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_LAP_RCVD);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

static void lap_on_a_roce_port_is_dropped(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	long before = fk_drops(fk, CM_DROP_ATTR);
	union cm_kunit_msg mad;

	fk->port_data[1].immutable.core_cap_flags = RDMA_CORE_PORT_IBA_ROCE;
	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_ATTR), before + 1);
	KUNIT_EXPECT_EQ(test, id->lap_state, IB_CM_LAP_UNINIT);
}

static void lap_outside_established_is_ignored(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_rep_rcvd(fk);
	union cm_kunit_msg mad;

	fk_lap(&mad, fk_local(id), FK_PEER_ID, FK_OUR_QPN);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_REP_RCVD);
}

static void apr_without_a_lap_is_not_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_active_established(fk);
	union cm_kunit_msg mad;

	fk_mad(&mad, CM_APR_ATTR_ID, 0x700);
	IBA_SET(CM_APR_LOCAL_COMM_ID, &mad.apr, FK_PEER_ID);
	IBA_SET(CM_APR_REMOTE_COMM_ID, &mad.apr, fk_local(id));
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_ESTABLISHED);
}

/* A SIDR_REP with a status this CM does not know is delivered, as stock. */
static void sidr_rep_with_an_unknown_status_is_delivered(struct kunit *test)
{
	struct fk *fk = test->priv;
	struct ib_cm_id *id = fk_new_id(fk);
	union cm_kunit_msg mad;

	KUNIT_ASSERT_EQ(test, fk_send_sidr_req(id), 0);
	fk_sidr_rep(&mad, fk_local(id), 0x42, FK_PEER_QPN);
	IBA_SET(CM_SIDR_REP_ADDITIONAL_INFORMATION_LENGTH, &mad.sidr_rep, 0xff);
	fk_receive(fk, &mad);
	FK_EXPECT_EVENT(fk, 1, IB_CM_SIDR_REP_RECEIVED);
	KUNIT_EXPECT_EQ(test, fk_last_event(fk)->status, 0x42);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	KUNIT_EXPECT_NULL(test, fk_tracked(fk));
	KUNIT_EXPECT_EQ(test, fk_drops(fk, CM_DROP_FIELD), 0L);
}

static struct kunit_case fk_sidr_lap_cases[] = {
	KUNIT_CASE(sidr_req_and_rep_resolve_a_service),
	KUNIT_CASE(sidr_rep_with_an_unknown_status_is_delivered),
	KUNIT_CASE(sidr_req_timeout_reports_sidr_req_error),
	KUNIT_CASE(sidr_req_on_a_listener_is_answered),
	KUNIT_CASE(sidr_req_without_listener_is_unsupported),
	KUNIT_CASE(lap_is_received_on_an_established_ib_connection),
	KUNIT_CASE(lap_on_a_roce_port_is_dropped),
	KUNIT_CASE(lap_outside_established_is_ignored),
	KUNIT_CASE(apr_without_a_lap_is_not_delivered),
	{}
};

static struct kunit_suite fk_sidr_lap_suite = {
	.name = "ib_cm_sidr_lap",
	.suite_init = fk_suite_init,
	.suite_exit = fk_suite_exit,
	.init = fk_init,
	.exit = fk_exit,
	.test_cases = fk_sidr_lap_cases,
};

kunit_test_suite(fk_sidr_lap_suite);
