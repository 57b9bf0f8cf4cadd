// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_api_misuse: API calls in the wrong state or with bad arguments
 *
 * Ids from cm_kunit_ids.c.
 */

#include <kunit/test.h>

static u8 cm_kunit_data[256];

static int call_rep(struct ib_cm_id *id, u8 len, u8 rnr)
{
	struct ib_cm_rep_param param = {
		.qp_num = 0x1234, .starting_psn = 0x42,
		.private_data = cm_kunit_data, .private_data_len = len,
		.rnr_retry_count = rnr,
	};

	return ib_send_cm_rep(id, &param);
}

static int call_rep_ok(struct ib_cm_id *id)
{
	return call_rep(id, IB_CM_REP_PRIVATE_DATA_SIZE, 7);
}

static int call_rep_long(struct ib_cm_id *id)
{
	return call_rep(id, IB_CM_REP_PRIVATE_DATA_SIZE + 1, 7);
}

static int call_rep_bad_rnr_retry(struct ib_cm_id *id)
{
	return call_rep(id, 0, 8);
}

static int call_rtu_ok(struct ib_cm_id *id)
{
	return ib_send_cm_rtu(id, cm_kunit_data, IB_CM_RTU_PRIVATE_DATA_SIZE);
}

static int call_rtu_long(struct ib_cm_id *id)
{
	return ib_send_cm_rtu(id, cm_kunit_data,
			      IB_CM_RTU_PRIVATE_DATA_SIZE + 1);
}

static int call_dreq_ok(struct ib_cm_id *id)
{
	return ib_send_cm_dreq(id, NULL, 0);
}

static int call_dreq_long(struct ib_cm_id *id)
{
	return ib_send_cm_dreq(id, cm_kunit_data,
			       IB_CM_DREQ_PRIVATE_DATA_SIZE + 1);
}

static int call_drep_ok(struct ib_cm_id *id)
{
	return ib_send_cm_drep(id, NULL, 0);
}

static int call_drep_long(struct ib_cm_id *id)
{
	return ib_send_cm_drep(id, cm_kunit_data,
			       IB_CM_DREP_PRIVATE_DATA_SIZE + 1);
}

static int call_rej_ok(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			      cm_kunit_data, IB_CM_REJ_PRIVATE_DATA_SIZE);
}

static int call_rej_long(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			      cm_kunit_data, IB_CM_REJ_PRIVATE_DATA_SIZE + 1);
}

static int call_rej_long_ari(struct ib_cm_id *id)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, cm_kunit_data,
			      IB_CM_REJ_ARI_LENGTH + 1, NULL, 0);
}

static int call_mra(struct ib_cm_id *id)
{
	return ib_prepare_cm_mra(id);
}

static int call_sidr_rep_ok(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = { .status = IB_SIDR_SUCCESS };

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_sidr_rep_long_info(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = {
		.info = cm_kunit_data,
		.info_length = IB_CM_SIDR_REP_INFO_LENGTH + 1,
	};

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_sidr_rep_long_data(struct ib_cm_id *id)
{
	struct ib_cm_sidr_rep_param param = {
		.private_data = cm_kunit_data,
		.private_data_len = IB_CM_SIDR_REP_PRIVATE_DATA_SIZE + 1,
	};

	return ib_send_cm_sidr_rep(id, &param);
}

static int call_notify_unknown(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_QP_FATAL);
}

static int call_notify_comm_est(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_COMM_EST);
}

static int call_notify_path_mig(struct ib_cm_id *id)
{
	return ib_cm_notify(id, IB_EVENT_PATH_MIG);
}

static int call_qp_attr(struct ib_cm_id *id, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = 0;

	return ib_cm_init_qp_attr(id, &attr, &mask);
}

static int call_qp_init(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_INIT);
}

static int call_qp_rtr(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_RTR);
}

static int call_qp_rts(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_RTS);
}

static int call_qp_sqd(struct ib_cm_id *id)
{
	return call_qp_attr(id, IB_QPS_SQD);
}

static struct sa_path_rec cm_kunit_path = {
	.rec_type = SA_PATH_REC_TYPE_IB, .mtu = IB_MTU_1024,
};

static int call_req(struct ib_cm_id *id, struct ib_cm_req_param *param)
{
	if (!param->primary_path)
		param->primary_path = &cm_kunit_path;
	if (!param->qp_type)
		param->qp_type = IB_QPT_RC;
	return ib_send_cm_req(id, param);
}

static int call_req_without_path(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .qp_type = IB_QPT_RC };

	return ib_send_cm_req(id, &param);
}

static int call_req_ud(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = {
		.primary_path = &cm_kunit_path, .qp_type = IB_QPT_UD,
	};

	return ib_send_cm_req(id, &param);
}

static int call_req_long(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = {
		.private_data = cm_kunit_data,
		.private_data_len = IB_CM_REQ_PRIVATE_DATA_SIZE + 1,
	};

	return call_req(id, &param);
}

static int call_req_timeout_too_big(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .remote_cm_response_timeout = 32 };

	return call_req(id, &param);
}

static int call_req_too_many_retries(struct ib_cm_id *id)
{
	struct ib_cm_req_param param = { .max_cm_retries = 16 };

	return call_req(id, &param);
}

static int call_req_alt_mtu_differs(struct ib_cm_id *id)
{
	static struct sa_path_rec alt = {
		.rec_type = SA_PATH_REC_TYPE_IB, .mtu = IB_MTU_2048,
	};
	struct ib_cm_req_param param = { .alternate_path = &alt };

	return call_req(id, &param);
}

static int call_sidr_req_without_path(struct ib_cm_id *id)
{
	struct ib_cm_sidr_req_param param = { .service_id = 1 };

	return ib_send_cm_sidr_req(id, &param);
}

static int call_sidr_req_long(struct ib_cm_id *id)
{
	struct ib_cm_sidr_req_param param = {
		.path = &cm_kunit_path, .private_data = cm_kunit_data,
		.private_data_len = IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE + 1,
	};

	return ib_send_cm_sidr_req(id, &param);
}

static int call_null_params(struct ib_cm_id *id)
{
	return ib_send_cm_req(id, NULL);
}

static int call_rep_null(struct ib_cm_id *id)
{
	return ib_send_cm_rep(id, NULL);
}

static int call_sidr_req_null(struct ib_cm_id *id)
{
	return ib_send_cm_sidr_req(id, NULL);
}

static int call_sidr_rep_null(struct ib_cm_id *id)
{
	return ib_send_cm_sidr_rep(id, NULL);
}

struct cm_kunit_misuse_case {
	const char *desc;
	enum ib_cm_state state;
	enum ib_cm_lap_state lap_state;
	int (*call)(struct ib_cm_id *id);
	int ret;
	enum ib_cm_state after;
	bool port;	/* a port without MAD agents: sends fail -ENODEV */
};

#define MISUSE_LAP(d, s, l, c, r, a)					\
	{ .desc = d, .state = s, .lap_state = l, .call = c, .ret = r,	\
	  .after = a }
#define MISUSE(d, s, c, r, a)	MISUSE_LAP(d, s, IB_CM_LAP_UNINIT, c, r, a)
#define MISUSE_PORT(d, s, c, r, a)					\
	{ .desc = d, .state = s, .lap_state = IB_CM_LAP_UNINIT, .call = c, \
	  .ret = r, .after = a, .port = true }

static const struct cm_kunit_misuse_case cm_kunit_misuse_cases[] = {
	MISUSE("REP from IDLE", IB_CM_IDLE, call_rep_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("RTU from IDLE", IB_CM_IDLE, call_rtu_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("DREQ from IDLE", IB_CM_IDLE, call_dreq_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("DREP from IDLE", IB_CM_IDLE, call_drep_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("REJ from IDLE", IB_CM_IDLE, call_rej_ok, -EINVAL, IB_CM_IDLE),
	MISUSE("MRA from IDLE", IB_CM_IDLE, call_mra, -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REP from IDLE", IB_CM_IDLE, call_sidr_rep_ok, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP INIT attrs in IDLE", IB_CM_IDLE, call_qp_init, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTR attrs in IDLE", IB_CM_IDLE, call_qp_rtr, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTS attrs in IDLE", IB_CM_IDLE, call_qp_rts, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("QP RTR attrs in LISTEN", IB_CM_LISTEN, call_qp_rtr, -EINVAL,
	       IB_CM_LISTEN),
	MISUSE("QP INIT attrs in TIMEWAIT", IB_CM_TIMEWAIT, call_qp_init,
	       -EINVAL, IB_CM_TIMEWAIT),
	MISUSE("QP INIT attrs in REQ_SENT", IB_CM_REQ_SENT, call_qp_init, 0,
	       IB_CM_REQ_SENT),
	MISUSE("QP RTR attrs in REQ_SENT", IB_CM_REQ_SENT, call_qp_rtr,
	       -EINVAL, IB_CM_REQ_SENT),
	MISUSE("QP RTS attrs in MRA_REQ_RCVD", IB_CM_MRA_REQ_RCVD, call_qp_rts,
	       -EINVAL, IB_CM_MRA_REQ_RCVD),
	MISUSE("QP SQD attrs when established", IB_CM_ESTABLISHED, call_qp_sqd,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("unknown event to notify", IB_CM_ESTABLISHED,
	       call_notify_unknown, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("unknown event to notify in IDLE", IB_CM_IDLE,
	       call_notify_unknown, -EINVAL, IB_CM_IDLE),
	MISUSE("COMM_EST in IDLE", IB_CM_IDLE, call_notify_comm_est, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("COMM_EST when established", IB_CM_ESTABLISHED,
	       call_notify_comm_est, -EISCONN, IB_CM_ESTABLISHED),
	MISUSE("PATH_MIG in IDLE", IB_CM_IDLE, call_notify_path_mig, -EINVAL,
	       IB_CM_IDLE),
	MISUSE("PATH_MIG without alternate path", IB_CM_ESTABLISHED,
	       call_notify_path_mig, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REP when established", IB_CM_ESTABLISHED, call_rep_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("RTU when established", IB_CM_ESTABLISHED, call_rtu_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("DREP when established", IB_CM_ESTABLISHED, call_drep_ok,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REJ when established", IB_CM_ESTABLISHED, call_rej_ok, -EINVAL,
	       IB_CM_ESTABLISHED),
	MISUSE("MRA when established without LAP", IB_CM_ESTABLISHED, call_mra,
	       -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REP twice", IB_CM_REP_SENT, call_rep_ok, -EINVAL,
	       IB_CM_REP_SENT),
	MISUSE("DREQ in TIMEWAIT", IB_CM_TIMEWAIT, call_dreq_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("DREP in TIMEWAIT", IB_CM_TIMEWAIT, call_drep_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("REJ in TIMEWAIT", IB_CM_TIMEWAIT, call_rej_ok, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("MRA in TIMEWAIT", IB_CM_TIMEWAIT, call_mra, -EINVAL,
	       IB_CM_TIMEWAIT),
	MISUSE("MRA on a listener", IB_CM_LISTEN, call_mra, -EINVAL,
	       IB_CM_LISTEN),
	MISUSE("SIDR_REP after SIDR_REQ sent", IB_CM_SIDR_REQ_SENT,
	       call_sidr_rep_ok, -EINVAL, IB_CM_SIDR_REQ_SENT),
	MISUSE_PORT("REP with long private data", IB_CM_REQ_RCVD,
		    call_rep_long, -EINVAL, IB_CM_REQ_RCVD),
	MISUSE_PORT("REP with RNR retry count 8 (as 7) reaches the port",
		    IB_CM_REQ_RCVD, call_rep_bad_rnr_retry, -ENODEV,
		    IB_CM_REQ_RCVD),
	MISUSE_PORT("REP with full private data reaches the port",
		    IB_CM_REQ_RCVD, call_rep_ok, -ENODEV, IB_CM_REQ_RCVD),
	MISUSE_PORT("REP after MRA reaches the port", IB_CM_MRA_REQ_SENT,
		    call_rep_ok, -ENODEV, IB_CM_MRA_REQ_SENT),
	MISUSE_PORT("RTU with long private data", IB_CM_REP_RCVD,
		    call_rtu_long, -EINVAL, IB_CM_REP_RCVD),
	MISUSE_PORT("RTU with full private data reaches the port",
		    IB_CM_REP_RCVD, call_rtu_ok, -ENODEV, IB_CM_REP_RCVD),
	MISUSE("DREQ with long private data", IB_CM_ESTABLISHED,
	       call_dreq_long, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("DREP with long private data", IB_CM_DREQ_RCVD, call_drep_long,
	       -EINVAL, IB_CM_DREQ_RCVD),
	MISUSE("REJ with long private data", IB_CM_REQ_RCVD, call_rej_long,
	       -EINVAL, IB_CM_REQ_RCVD),
	MISUSE("REJ with long ARI", IB_CM_REQ_RCVD, call_rej_long_ari, -EINVAL,
	       IB_CM_REQ_RCVD),
	MISUSE("REJ of a received REQ returns to IDLE", IB_CM_REQ_RCVD,
	       call_rej_ok, 0, IB_CM_IDLE),
	MISUSE("REJ of a received REP returns to IDLE", IB_CM_REP_RCVD,
	       call_rej_ok, 0, IB_CM_IDLE),
	MISUSE("SIDR_REP with long info", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_long_info, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("SIDR_REP with long private data", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_long_data, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("MRA for a received REQ", IB_CM_REQ_RCVD, call_mra, 0,
	       IB_CM_MRA_REQ_SENT),
	MISUSE("MRA for a received REP", IB_CM_REP_RCVD, call_mra, 0,
	       IB_CM_MRA_REP_SENT),
	MISUSE("MRA twice for a REQ", IB_CM_MRA_REQ_SENT, call_mra, -EINVAL,
	       IB_CM_MRA_REQ_SENT),
	MISUSE_LAP("MRA for a received LAP", IB_CM_ESTABLISHED, IB_CM_LAP_RCVD,
		   call_mra, 0, IB_CM_ESTABLISHED),
	MISUSE_LAP("MRA for a LAP we sent", IB_CM_ESTABLISHED, IB_CM_LAP_SENT,
		   call_mra, -EINVAL, IB_CM_ESTABLISHED),
	MISUSE("REQ without primary path", IB_CM_IDLE, call_req_without_path,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ for a UD QP", IB_CM_IDLE, call_req_ud, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with long private data", IB_CM_IDLE, call_req_long,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with response timeout 32", IB_CM_IDLE,
	       call_req_timeout_too_big, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with 16 CM retries", IB_CM_IDLE, call_req_too_many_retries,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("REQ with alternate path of another MTU", IB_CM_IDLE,
	       call_req_alt_mtu_differs, -EINVAL, IB_CM_IDLE),
	MISUSE("REQ without parameters", IB_CM_IDLE, call_null_params, -EINVAL,
	       IB_CM_IDLE),
	MISUSE_PORT("REP without parameters", IB_CM_REQ_RCVD, call_rep_null,
		    -EINVAL, IB_CM_REQ_RCVD),
	MISUSE("SIDR_REQ without parameters", IB_CM_IDLE, call_sidr_req_null,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REP without parameters", IB_CM_SIDR_REQ_RCVD,
	       call_sidr_rep_null, -EINVAL, IB_CM_SIDR_REQ_RCVD),
	MISUSE("SIDR_REQ without path", IB_CM_IDLE, call_sidr_req_without_path,
	       -EINVAL, IB_CM_IDLE),
	MISUSE("SIDR_REQ with long private data", IB_CM_IDLE,
	       call_sidr_req_long, -EINVAL, IB_CM_IDLE),
};

static void cm_kunit_misuse_desc(const struct cm_kunit_misuse_case *c,
				 char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_misuse, cm_kunit_misuse_cases,
		  cm_kunit_misuse_desc);

static void api_call_is_refused_or_allowed(struct kunit *test)
{
	const struct cm_kunit_misuse_case *c = test->param_value;
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	p->id.state = c->state;
	p->id.lap_state = c->lap_state;
	if (c->port)
		p->av.port = ctx->port[0];
	KUNIT_EXPECT_EQ(test, c->call(&p->id), c->ret);
	KUNIT_EXPECT_EQ(test, p->id.state, c->after);
	KUNIT_EXPECT_NULL(test, p->msg);
	if (c->lap_state == IB_CM_LAP_RCVD && !c->ret)
		KUNIT_EXPECT_EQ(test, p->id.lap_state, IB_CM_MRA_LAP_SENT);
	cm_kunit_put_down(p);
}

/* With an alternate path, PATH_MIG swaps the paths and ends any LAP. */
static void path_migration_swaps_primary_and_alternate(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct cm_id_priv *p = cm_kunit_new_id(test, ctx->dev[0]);

	p->id.state = IB_CM_ESTABLISHED;
	p->av.port = ctx->port[0];
	p->av.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	p->av.ah_attr.ib.dlid = 0x11;
	p->alt_av.port = ctx->port[1];
	p->alt_av.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	p->alt_av.ah_attr.ib.dlid = 0x22;
	KUNIT_EXPECT_EQ(test, ib_cm_notify(&p->id, IB_EVENT_PATH_MIG), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->av.port, ctx->port[1]);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&p->av.ah_attr), 0x22U);
	KUNIT_EXPECT_PTR_EQ(test, p->alt_av.port, ctx->port[0]);
	KUNIT_EXPECT_EQ(test, p->id.lap_state, IB_CM_LAP_IDLE);
	/* A LAP under way blocks migration. */
	p->id.lap_state = IB_CM_LAP_SENT;
	KUNIT_EXPECT_EQ(test, ib_cm_notify(&p->id, IB_EVENT_PATH_MIG), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, p->av.port, ctx->port[1]);
	cm_kunit_put_down(p);
}

/*
 * An id that cannot send its DREQ (no path) still leaves ESTABLISHED for
 * TIMEWAIT, and timewait ends in IDLE with a TIMEWAIT_EXIT event.
 */
static struct completion cm_kunit_timewait_done;
static enum ib_cm_event_type cm_kunit_timewait_event;

static int cm_kunit_timewait_handler(struct ib_cm_id *cm_id,
				     const struct ib_cm_event *event)
{
	cm_kunit_timewait_event = event->event;
	complete(&cm_kunit_timewait_done);
	return 0;
}

static void dreq_without_path_still_passes_through_timewait(struct kunit *test)
{
	struct cm_kunit_ctx *ctx = test->priv;
	struct ib_cm_id *id;

	init_completion(&cm_kunit_timewait_done);
	id = ib_create_cm_id(ctx->dev[0], cm_kunit_timewait_handler, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(id));
	id->state = IB_CM_ESTABLISHED;
	KUNIT_EXPECT_EQ(test, ib_send_cm_dreq(id, NULL, 0), -EINVAL);
	/* Timewait lasts a millisecond here: it may be over already. */
	KUNIT_EXPECT_TRUE(test, id->state == IB_CM_TIMEWAIT ||
			  id->state == IB_CM_IDLE);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&cm_kunit_timewait_done,
							  10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, cm_kunit_timewait_event, IB_CM_TIMEWAIT_EXIT);
	KUNIT_EXPECT_EQ(test, id->state, IB_CM_IDLE);
	ib_destroy_cm_id(id);
}

static struct kunit_case cm_kunit_misuse_cases_list[] = {
	KUNIT_CASE_PARAM(api_call_is_refused_or_allowed,
			 cm_kunit_misuse_gen_params),
	KUNIT_CASE(path_migration_swaps_primary_and_alternate),
	KUNIT_CASE(dreq_without_path_still_passes_through_timewait),
	{}
};

static struct kunit_suite cm_kunit_misuse_suite = {
	.name = "ib_cm_api_misuse",
	.init = cm_kunit_ctx_init,
	.test_cases = cm_kunit_misuse_cases_list,
};

kunit_test_suite(cm_kunit_misuse_suite);
