// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm_hostile: received MADs the CM must drop or classify
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#define CM_KUNIT_OK	(-1)	/* cm_check_mad(): keep the MAD */

struct cm_kunit_check_case {
	const char *desc;
	int len;
	u8 base_version;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	__be16 attr_id;
	int why;
};

/* A header that passes, but for its length and attribute ID. */
#define CM_KUNIT_HDR(d, l, a, w)					\
	{ .desc = d, .len = l, .base_version = IB_MGMT_BASE_VERSION,	\
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = CM_CLASS_VERSION, \
	  .method = IB_MGMT_METHOD_SEND, .attr_id = a, .why = w }

static const struct cm_kunit_check_case cm_kunit_check_cases[] = {
	CM_KUNIT_HDR("REQ of full length", 256, CM_REQ_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("MRA", 256, CM_MRA_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("REP", 256, CM_REP_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("SIDR_REP", 256, CM_SIDR_REP_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("APR, the last attribute", 256, CM_APR_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("longer than a MAD", 2048, CM_REQ_ATTR_ID, CM_KUNIT_OK),
	CM_KUNIT_HDR("one byte short", 255, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("header only", 24, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("empty", 0, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	CM_KUNIT_HDR("negative length", -1, CM_REQ_ATTR_ID, CM_DROP_LENGTH),
	{ .desc = "short and of another class", .len = 100, .base_version = 1,
	  .mgmt_class = 0x81, .class_version = 1, .method = 1, .attr_id = 0,
	  .why = CM_DROP_LENGTH },
	{ .desc = "base version 0", .len = 256, .base_version = 0,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "base version 2", .len = 256, .base_version = 2,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "OPA base version", .len = 256, .base_version = 0x80,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "class version 1", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 1, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "class version 3", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 3, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "class version 0xff", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 0xff, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "subnet management class", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED, .class_version = 2,
	  .method = 3, .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "subnet administration class", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_SUBN_ADM, .class_version = 2, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "performance class", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_PERF_MGMT, .class_version = 2,
	  .method = 3, .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "class 0x87", .len = 256, .base_version = 1,
	  .mgmt_class = 0x87, .class_version = 2, .method = 3,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "wrong class and method", .len = 256, .base_version = 1,
	  .mgmt_class = 0x03, .class_version = 2, .method = 1,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_VERSION },
	{ .desc = "GET", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2,
	  .method = IB_MGMT_METHOD_GET, .attr_id = CM_REQ_ATTR_ID,
	  .why = CM_DROP_METHOD },
	{ .desc = "SET", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2,
	  .method = IB_MGMT_METHOD_SET, .attr_id = CM_REQ_ATTR_ID,
	  .why = CM_DROP_METHOD },
	{ .desc = "GET response", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2,
	  .method = IB_MGMT_METHOD_GET_RESP, .attr_id = CM_REQ_ATTR_ID,
	  .why = CM_DROP_METHOD },
	{ .desc = "SEND with the response bit", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2,
	  .method = IB_MGMT_METHOD_SEND | IB_MGMT_METHOD_RESP,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_METHOD },
	{ .desc = "method 0", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2, .method = 0,
	  .attr_id = CM_REQ_ATTR_ID, .why = CM_DROP_METHOD },
	{ .desc = "wrong method and attribute", .len = 256, .base_version = 1,
	  .mgmt_class = IB_MGMT_CLASS_CM, .class_version = 2, .method = 1,
	  .attr_id = 0, .why = CM_DROP_METHOD },
	CM_KUNIT_HDR("attribute 0", 256, cpu_to_be16(0x0000), CM_DROP_ATTR),
	CM_KUNIT_HDR("ClassPortInfo", 256, cpu_to_be16(0x0001), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x0f", 256, cpu_to_be16(0x000f), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x1b", 256, cpu_to_be16(0x001b), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0xff", 256, cpu_to_be16(0x00ff), CM_DROP_ATTR),
	CM_KUNIT_HDR("REQ byte-swapped", 256, cpu_to_be16(0x1000), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0x1010", 256, cpu_to_be16(0x1010), CM_DROP_ATTR),
	CM_KUNIT_HDR("attribute 0xffff", 256, cpu_to_be16(0xffff), CM_DROP_ATTR),
};

static void cm_kunit_check_desc(const struct cm_kunit_check_case *c,
				char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cm_kunit_check, cm_kunit_check_cases, cm_kunit_check_desc);

struct cm_kunit_rx {
	struct ib_mad_recv_wc wc;
	struct ib_wc ib_wc;
	struct ib_mad mad;
};

static void cm_kunit_rx_init(struct cm_kunit_rx *rx, int len)
{
	rx->wc.recv_buf.mad = &rx->mad;
	rx->wc.wc = &rx->ib_wc;
	rx->wc.mad_len = len;
}

static void check_mad_classifies_header(struct kunit *test)
{
	const struct cm_kunit_check_case *c = test->param_value;
	struct cm_kunit_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	struct ib_mad_hdr *hdr;

	KUNIT_ASSERT_NOT_NULL(test, rx);
	cm_kunit_rx_init(rx, c->len);
	hdr = &rx->mad.mad_hdr;
	hdr->base_version = c->base_version;
	hdr->mgmt_class = c->mgmt_class;
	hdr->class_version = c->class_version;
	hdr->method = c->method;
	hdr->attr_id = c->attr_id;
	KUNIT_EXPECT_EQ(test, cm_check_mad(&rx->wc), c->why);
}

/* Only REQ .. APR are CM attributes, at indices 0..10. */
static void attribute_ids_outside_req_to_apr_are_invalid(struct kunit *test)
{
	unsigned int id;

	for (id = 0; id <= 0xffff; id++) {
		bool valid = id >= be16_to_cpu(CM_REQ_ATTR_ID) &&
			     id <= be16_to_cpu(CM_APR_ATTR_ID);

		if (cm_attr_valid(cpu_to_be16(id)) != valid)
			KUNIT_FAIL(test, "attribute 0x%04x valid=%d", id, !valid);
		if (valid)
			KUNIT_EXPECT_EQ(test, cm_attr_index(cpu_to_be16(id)),
					id - be16_to_cpu(CM_REQ_ATTR_ID));
	}
}

static const u8 cm_kunit_qp_type_bytes[][2] = {
	/* byte 43 (low 3 bits: type 2 bits, flow control 1), byte 51 low 3 */
	{ 0x00, 0 }, { 0x01, 7 }, { 0x02, 0 }, { 0x03, 1 }, { 0x04, 0 },
	{ 0x06, 1 }, { 0x06, 0 }, { 0x06, 2 }, { 0x07, 1 }, { 0xf9, 0 },
};

/* The QP type a REQ asks for, worked out from the raw bytes. */
static enum ib_qp_type cm_kunit_req_qp_type(const u8 *data)
{
	switch ((data[43] >> 1) & 3) {
	case 0:
		return IB_QPT_RC;
	case 1:
		return IB_QPT_UC;
	case 3:
		return (data[51] & 7) == 1 ? IB_QPT_XRC_TGT : IB_QPT_MAX;
	default:
		return IB_QPT_MAX;
	}
}

static void req_transport_selects_qp_type(struct kunit *test)
{
	union cm_kunit_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct cm_req_msg *req;
	u8 *data;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	req = &m->req;
	data = m->mad.data;
	for (i = 0; i < ARRAY_SIZE(cm_kunit_qp_type_bytes); i++) {
		data[43] = cm_kunit_qp_type_bytes[i][0];
		data[51] = cm_kunit_qp_type_bytes[i][1];
		KUNIT_EXPECT_EQ_MSG(test, cm_req_qp_type(req),
				    cm_kunit_req_qp_type(data),
				    "bytes %02x %02x", data[43], data[51]);
	}
	data[43] = 0x00;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_RC);
	data[43] = 0x02;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_UC);
	data[43] = 0x04;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_MAX);
	data[43] = 0x06;
	data[51] = 0x01;
	KUNIT_EXPECT_EQ(test, cm_req_qp_type(req), IB_QPT_XRC_TGT);
}

static void req_validity_needs_type_mtu_and_comm_id(struct kunit *test)
{
	struct cm_req_msg *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	unsigned int mtu;

	KUNIT_ASSERT_NOT_NULL(test, req);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 1);
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, CM_REQ_TRANSPORT_RC);
	for (mtu = 0; mtu < 16; mtu++) {
		IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, mtu);
		KUNIT_EXPECT_EQ_MSG(test, cm_req_valid(req),
				    mtu >= IB_MTU_256 && mtu <= IB_MTU_4096,
				    "MTU %u", mtu);
	}
	IBA_SET(CM_REQ_PATH_PACKET_PAYLOAD_MTU, req, IB_MTU_4096);
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 0);
	KUNIT_EXPECT_FALSE(test, cm_req_valid(req));
	IBA_SET(CM_REQ_LOCAL_COMM_ID, req, 0xffffffff);
	KUNIT_EXPECT_TRUE(test, cm_req_valid(req));
	IBA_SET(CM_REQ_TRANSPORT_SERVICE_TYPE, req, 2);
	KUNIT_EXPECT_FALSE(test, cm_req_valid(req));
}

/* What cm_check_mad() should say, worked out independently. */
static int cm_kunit_expected_why(const struct cm_kunit_rx *rx)
{
	const struct ib_mad_hdr *hdr = &rx->mad.mad_hdr;
	u16 attr = be16_to_cpu(hdr->attr_id);

	if (rx->wc.mad_len < 256)
		return CM_DROP_LENGTH;
	if (hdr->base_version != 1 || hdr->mgmt_class != 0x07 ||
	    hdr->class_version != 2)
		return CM_DROP_VERSION;
	if (hdr->method != 0x03)
		return CM_DROP_METHOD;
	if (attr < be16_to_cpu(CM_REQ_ATTR_ID) ||
	    attr > be16_to_cpu(CM_APR_ATTR_ID))
		return CM_DROP_ATTR;
	return CM_KUNIT_OK;
}

static bool cm_kunit_any(const u8 *p, size_t len)
{
	return memchr_inv(p, 0, len);
}

#define CM_KUNIT_SWEEP		100000
#define CM_KUNIT_SEED		0x1bc0ffee

/*
 * Whether path @alt of @req came through a router from a sender that did
 * not know its own LID here: then the SL is the packet's.
 */
static bool cm_kunit_routed_sender(struct cm_req_msg *req, bool alt)
{
	if (alt)
		return !IBA_GET(CM_REQ_ALTERNATE_SUBNET_LOCAL, req) &&
		       IBA_GET(CM_REQ_ALTERNATE_LOCAL_PORT_LID, req) == 0xffff;
	return !IBA_GET(CM_REQ_PRIMARY_SUBNET_LOCAL, req) &&
	       IBA_GET(CM_REQ_PRIMARY_LOCAL_PORT_LID, req) == 0xffff;
}

/* Random MADs, biased towards headers that pass, through every check. */
static void random_mads_are_classified_without_crashing(struct kunit *test)
{
	struct cm_kunit_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	unsigned int seen[CM_DROP_ATTR + 2] = {};
	unsigned int valid_reqs = 0, alt_paths = 0;
	struct sa_path_rec *path;
	struct rnd_state rnd;
	unsigned int i;

	path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rx);
	KUNIT_ASSERT_NOT_NULL(test, path);
	prandom_seed_state(&rnd, CM_KUNIT_SEED);
	/* The SL a routed REQ's path takes from the packet. */
	rx->ib_wc.sl = 9;
	for (i = 0; i < CM_KUNIT_SWEEP; i++) {
		struct ib_mad_hdr *hdr = &rx->mad.mad_hdr;
		/* The same random bytes, read as a REQ and as a REP. */
		struct cm_req_msg *req = (struct cm_req_msg *)&rx->mad;
		struct cm_rep_msg *rep = (struct cm_rep_msg *)&rx->mad;
		const u8 *d = rx->mad.data;
		u32 r = prandom_u32_state(&rnd);
		int why, want;
		u8 want_sl;
		bool alt;

		prandom_bytes_state(&rnd, &rx->mad, sizeof(rx->mad));
		cm_kunit_rx_init(rx, r & 3 ? 256 : (int)(r >> 2) % 512 - 64);
		if ((r >> 12) & 3)
			hdr->base_version = IB_MGMT_BASE_VERSION;
		if ((r >> 14) & 3)
			hdr->mgmt_class = IB_MGMT_CLASS_CM;
		if ((r >> 16) & 3)
			hdr->class_version = CM_CLASS_VERSION;
		if ((r >> 18) & 3)
			hdr->method = IB_MGMT_METHOD_SEND;
		if ((r >> 20) & 3)
			hdr->attr_id = cpu_to_be16(0x0c + (r >> 22) % 19);

		why = cm_check_mad(&rx->wc);
		want = cm_kunit_expected_why(rx);
		if (why != want) {
			KUNIT_FAIL(test, "MAD %u: cm_check_mad() %d, expected %d",
				   i, why, want);
			break;
		}
		seen[why + 1]++;

		/* The REQ checks that need no port, on every MAD. */
		if (cm_req_qp_type(req) != cm_kunit_req_qp_type(d)) {
			KUNIT_FAIL(test, "MAD %u: QP type %d", i,
				   cm_req_qp_type(req));
			break;
		}
		if (cm_req_valid(req) !=
		    (cm_kunit_req_qp_type(d) != IB_QPT_MAX &&
		     (d[50] >> 4) >= 1 && (d[50] >> 4) <= 5 &&
		     cm_kunit_any(d, 4))) {
			KUNIT_FAIL(test, "MAD %u: cm_req_valid() wrong", i);
			break;
		}
		valid_reqs += cm_req_valid(req);
		alt = cm_req_has_alt_path(req);
		/* A LID, or an OPA GID (OUI 00:06:6a at bytes 108-110). */
		if (alt != (cm_kunit_any(d + 96, 2) ||
			    (d[108] == 0x00 && d[109] == 0x06 &&
			     d[110] == 0x6a))) {
			KUNIT_FAIL(test, "MAD %u: alternate path wrong", i);
			break;
		}
		alt_paths += alt;
		if (be32_to_cpu(cm_rep_qpn(rep, IB_QPT_RC)) !=
		    (d[12] << 16 | d[13] << 8 | d[14]) ||
		    be32_to_cpu(cm_rep_qpn(rep, IB_QPT_XRC_INI)) !=
		    (d[16] << 16 | d[17] << 8 | d[18])) {
			KUNIT_FAIL(test, "MAD %u: REP QPN wrong", i);
			break;
		}

		/* Building a path from any REQ is safe and copies fields. */
		memset(path, 0, sizeof(*path));
		cm_path_from_req(req, path, r & 1, &rx->ib_wc);
		want_sl = (r & 1 ? d[138] : d[94]) >> 4;
		if (cm_kunit_routed_sender(req, r & 1))
			want_sl = rx->ib_wc.sl;
		if (path->mtu != d[50] >> 4 || path->sl != want_sl ||
		    path->packet_life_time !=
		    max(((r & 1 ? d[139] : d[95]) >> 3) - 1, 0) ||
		    be16_to_cpu(path->pkey) != (d[48] << 8 | d[49])) {
			KUNIT_FAIL(test, "MAD %u: path from REQ wrong", i);
			break;
		}
		if (!(i % 4096))
			cond_resched();
	}
	/* The bias made every verdict occur often. */
	for (i = 0; i < ARRAY_SIZE(seen); i++)
		KUNIT_EXPECT_GT_MSG(test, seen[i], CM_KUNIT_SWEEP / 50,
				    "verdict %d", (int)i - 1);
	KUNIT_EXPECT_GT(test, valid_reqs, CM_KUNIT_SWEEP / 20);
	KUNIT_EXPECT_GT(test, alt_paths, CM_KUNIT_SWEEP / 2);
	kunit_info(test, "%u MADs: %u kept, %u short, %u version, %u method, %u attribute; %u valid REQs",
		   CM_KUNIT_SWEEP, seen[0], seen[1 + CM_DROP_LENGTH],
		   seen[1 + CM_DROP_VERSION], seen[1 + CM_DROP_METHOD],
		   seen[1 + CM_DROP_ATTR], valid_reqs);
}

static struct kunit_case cm_kunit_hostile_cases[] = {
	KUNIT_CASE_PARAM(check_mad_classifies_header,
			 cm_kunit_check_gen_params),
	KUNIT_CASE(attribute_ids_outside_req_to_apr_are_invalid),
	KUNIT_CASE(req_transport_selects_qp_type),
	KUNIT_CASE(req_validity_needs_type_mtu_and_comm_id),
	KUNIT_CASE_SLOW(random_mads_are_classified_without_crashing),
	{}
};

static struct kunit_suite cm_kunit_hostile_suite = {
	.name = "ib_cm_hostile",
	.test_cases = cm_kunit_hostile_cases,
};

kunit_test_suite(cm_kunit_hostile_suite);
