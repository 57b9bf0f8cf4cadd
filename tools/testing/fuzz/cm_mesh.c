// SPDX-License-Identifier: GPL-2.0
/*
 * cm_mesh - one node of a many-node fabric: it listens, connects to its
 * peers and keeps those connections up, for the fabric test and bench
 * case (an MPI-style job start, and a restart storm).
 *
 *   cm_mesh -a ADDR [-p PORT] [-P PEER,PEER,...] [-n N] [-e EXPECT] [-G]
 *           [-r RETRY_MS] [-T SECS]
 *
 * It listens at ADDR:PORT and accepts every request.  With -P it makes N
 * connections to each PEER (at the same PORT), all at once: at the start,
 * or with -G when SIGUSR2 comes (so that every node of a fabric in one
 * machine, started one by one, can be let go at the same moment).  A
 * connection that fails (address or route error, REJ, REQ_ERROR) or is
 * disconnected is destroyed and made again RETRY_MS later (default 100),
 * until the program ends: the mesh heals itself, and what it cost is in
 * the counts.  SIGUSR1 says "the peers are gone" (as a ULP's keep-alive
 * would): every connection this node made is destroyed at once (the CM
 * sends its DREQ) and made again.
 *
 * The connections have no QPs: like cmtime's "no QPs" pass they carry
 * made-up QP numbers, so that the fabric costs the CMs and rdma_cm, not
 * rxe's QPs.  The numbers start from the process id, so that a node
 * started again does not reuse its last run's numbers (the peer's CM
 * would take them for a stale connection).
 *
 * Output, line by line, times in ms since the epoch (CLOCK_REALTIME):
 *   cm_mesh listening PORT
 *   cm_mesh started T              the first connect was started
 *   cm_mesh up ACTIVE PASSIVE T    all N x PEERs made connections are
 *                                  established and at least EXPECT
 *                                  accepted ones (again, after a loss)
 *   cm_mesh down T                 no longer complete (a connection
 *                                  failed or was lost)
 *   cm_mesh dropped N T            SIGUSR1 destroyed N connections
 * and on SIGHUP, "cm_mesh counts KEY VALUE" lines, ending with "cm_mesh
 * counts end": attempts, established, accepted, disconnects (of made
 * connections, by the peer), failed (made connections that failed and
 * were made again) by the event that ended them, passive_failed
 * (accepted ones that failed before they were up).  SIGHUP also stops
 * making connections again, so that the counts stay those of the run
 * while the nodes are stopped one by one.  SIGINT or SIGTERM destroy
 * everything and end it: exit 0; 1 on a setup error; 2 when the time
 * limit (-T, default 600 s) is reached.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define MAX_PEERS	256
#define MAX_ACTIVE	65536
#define N_EVENTS	32

enum state { IDLE, CONNECTING, UP };

/* One connection this node makes; slot i goes to peer i / N. */
struct link {
	struct rdma_cm_id *id;
	enum state state;
	long long retry_at;	/* ms; when IDLE, the time to make it again */
};

static struct {
	struct sockaddr_in self, peers[MAX_PEERS];
	unsigned int n_peers, per_peer, expect, n_active, retry_ms;
	bool go_wait;		/* -G: not before SIGUSR2 */
	bool frozen;		/* SIGHUP: make nothing again */
	struct link *links;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	unsigned int qpn;
	unsigned int up_active, up_passive;
	bool complete;
	/* counts */
	unsigned long attempts, established, accepted, disconnects;
	unsigned long passive_lost, passive_failed, failed, fail[N_EVENTS];
} m;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cm_mesh ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* A made-up QP number, never 0 or 1, new for every connection. */
static unsigned int next_qpn(void)
{
	m.qpn = (m.qpn + 1) & 0xffffff;
	if (m.qpn < 2)
		m.qpn = 2;
	return m.qpn;
}

static void conn_param(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->qp_num = next_qpn();
}

/* Print "up" each time the node's share of the mesh becomes complete. */
static void check_complete(void)
{
	bool now = m.up_active == m.n_active && m.up_passive >= m.expect;

	if (now && !m.complete)
		say("up %u %u %lld\n", m.up_active, m.up_passive, now_ms());
	else if (!now && m.complete)
		say("down %lld\n", now_ms());
	m.complete = now;
}

static void start_link(unsigned int i)
{
	struct link *l = &m.links[i];

	if (rdma_create_id(m.ch, &l->id, l, RDMA_PS_TCP))
		die("rdma_create_id");
	l->state = CONNECTING;
	m.attempts++;
	if (rdma_resolve_addr(l->id, NULL,
			      (struct sockaddr *)&m.peers[i / m.per_peer], 2000)) {
		/* Counted as an address error, and made again later. */
		m.fail[RDMA_CM_EVENT_ADDR_ERROR]++;
		m.failed++;
		rdma_destroy_id(l->id);
		l->id = NULL;
		l->state = IDLE;
		l->retry_at = now_ms() + m.retry_ms;
	}
}

/* Destroy link L's id (sending a DREQ if it is up); make it again later. */
static void drop_link(struct link *l, long long delay)
{
	if (l->state == UP)
		m.up_active--;
	rdma_destroy_id(l->id);
	l->id = NULL;
	l->state = IDLE;
	l->retry_at = now_ms() + delay;
	check_complete();
}

/* An event on a connection this node makes; the event is acknowledged. */
static void active_event(enum rdma_cm_event_type type, struct link *l)
{
	struct rdma_conn_param p;

	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!rdma_resolve_route(l->id, 2000))
			return;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		conn_param(&p);
		if (!rdma_connect(l->id, &p))
			return;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* Without a QP the RTU is ours to send. */
		if (!rdma_establish(l->id)) {
			l->state = UP;
			m.established++;
			m.up_active++;
			check_complete();
			return;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		m.disconnects++;
		drop_link(l, 0);
		return;
	default:
		break;
	}
	if (type < N_EVENTS)
		m.fail[type]++;
	m.failed++;
	drop_link(l, m.retry_ms);
}

/* An event on an accepted connection; the event is acknowledged. */
static void passive_event(enum rdma_cm_event_type type, struct rdma_cm_id *id)
{
	struct rdma_conn_param p;
	bool up = id->context == (void *)1;

	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		conn_param(&p);
		if (!rdma_accept(id, &p))
			return;
		m.passive_failed++;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		id->context = (void *)1;
		m.accepted++;
		m.up_passive++;
		check_complete();
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		m.passive_lost++;
		break;
	default:
		if (!up)
			m.passive_failed++;
		break;
	}
	if (up) {
		m.up_passive--;
		check_complete();
	}
	rdma_destroy_id(id);
}

static void handle_events(void)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	struct link *l;

	while (!rdma_get_cm_event(m.ch, &ev)) {
		type = ev->event;
		id = ev->id;
		/* Only the ids this node makes point into links[]. */
		l = id->context;
		if (l < m.links || l >= m.links + m.n_active)
			l = NULL;
		/* An id can be destroyed only once its events are acked. */
		rdma_ack_cm_event(ev);
		if (id == m.listen)
			continue;
		if (l)
			active_event(type, l);
		else
			passive_event(type, id);
	}
	if (errno != EAGAIN)
		die("rdma_get_cm_event");
}

/* SIGUSR1: every connection this node made goes, and is made again. */
static void drop_all(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < m.n_active; i++) {
		if (m.links[i].state == IDLE)
			continue;
		drop_link(&m.links[i], 0);
		n++;
	}
	say("dropped %u %lld\n", n, now_ms());
}

/* Start the links whose time has come; the ms until the next one, or -1. */
static int start_due(void)
{
	long long now = now_ms(), next = -1;
	unsigned int i;

	if (m.go_wait || m.frozen)
		return -1;
	for (i = 0; i < m.n_active; i++) {
		struct link *l = &m.links[i];

		if (l->state != IDLE)
			continue;
		if (l->retry_at <= now)
			start_link(i);
		/* A start that failed at once is due again later. */
		if (l->state == IDLE && (next < 0 || l->retry_at < next))
			next = l->retry_at;
	}
	return next < 0 ? -1 : (int)(next - now);
}

static void print_counts(void)
{
	static const int shown[] = {
		RDMA_CM_EVENT_ADDR_ERROR, RDMA_CM_EVENT_ROUTE_ERROR,
		RDMA_CM_EVENT_CONNECT_REQUEST, RDMA_CM_EVENT_CONNECT_RESPONSE,
		RDMA_CM_EVENT_CONNECT_ERROR, RDMA_CM_EVENT_UNREACHABLE,
		RDMA_CM_EVENT_REJECTED, RDMA_CM_EVENT_ADDR_CHANGE,
		RDMA_CM_EVENT_DEVICE_REMOVAL,
	};
	static const char prefix[] = "RDMA_CM_EVENT_";
	unsigned long other = m.failed;
	const char *name;
	unsigned int i;

	say("counts attempts %lu\n", m.attempts);
	say("counts established %lu\n", m.established);
	say("counts accepted %lu\n", m.accepted);
	say("counts disconnects %lu\n", m.disconnects);
	say("counts passive_lost %lu\n", m.passive_lost);
	say("counts passive_failed %lu\n", m.passive_failed);
	say("counts failed %lu\n", m.failed);
	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		name = rdma_event_str(shown[i]);
		if (!strncmp(name, prefix, sizeof(prefix) - 1))
			name += sizeof(prefix) - 1;
		say("counts failed_%s %lu\n", name, m.fail[shown[i]]);
		other -= m.fail[shown[i]];
	}
	say("counts failed_other %lu\n", other);
	say("counts end\n");
}

static void parse_peers(char *list, unsigned short port)
{
	char *a;

	for (a = strtok(list, ","); a; a = strtok(NULL, ",")) {
		struct sockaddr_in *s = &m.peers[m.n_peers];

		if (m.n_peers == MAX_PEERS) {
			fprintf(stderr, "cm_mesh: at most %d peers\n", MAX_PEERS);
			exit(1);
		}
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		if (inet_pton(AF_INET, a, &s->sin_addr) != 1) {
			fprintf(stderr, "cm_mesh: bad peer address %s\n", a);
			exit(1);
		}
		m.n_peers++;
	}
}

static void too_long(int sig)
{
	static const char msg[] = "cm_mesh: time limit reached\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: cm_mesh -a ADDR [-p PORT] [-P PEER,...] [-n N] [-e EXPECT]\n"
		"               [-G] [-r RETRY_MS] [-T SECS]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	char *peers = NULL;
	unsigned short port = 7700;
	int limit = 600, op, sigfd, timeout;
	struct pollfd pfd[2];
	sigset_t sigs;
	unsigned int i;

	m.per_peer = 1;
	m.retry_ms = 100;
	while ((op = getopt(argc, argv, "a:p:P:n:e:Gr:T:")) != -1) {
		switch (op) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = (unsigned short)atoi(optarg);
			break;
		case 'P':
			peers = optarg;
			break;
		case 'n':
			m.per_peer = (unsigned int)atoi(optarg);
			break;
		case 'e':
			m.expect = (unsigned int)atoi(optarg);
			break;
		case 'G':
			m.go_wait = true;
			break;
		case 'r':
			m.retry_ms = (unsigned int)atoi(optarg);
			break;
		case 'T':
			limit = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!addr || !m.per_peer || limit < 1)
		usage();
	m.self.sin_family = AF_INET;
	m.self.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &m.self.sin_addr) != 1)
		usage();
	if (peers)
		parse_peers(peers, port);
	m.n_active = m.n_peers * m.per_peer;
	if (m.n_active > MAX_ACTIVE)
		usage();
	m.links = calloc(m.n_active ? m.n_active : 1, sizeof(*m.links));
	if (!m.links)
		die("calloc");
	m.qpn = ((unsigned int)getpid() & 0xfff) << 12;
	signal(SIGALRM, too_long);
	alarm((unsigned int)limit);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	sigaddset(&sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL))
		die("sigprocmask");
	sigfd = signalfd(-1, &sigs, SFD_NONBLOCK);
	if (sigfd < 0)
		die("signalfd");

	m.ch = rdma_create_event_channel();
	if (!m.ch)
		die("rdma_create_event_channel");
	if (fcntl(m.ch->fd, F_SETFL, fcntl(m.ch->fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
	if (rdma_create_id(m.ch, &m.listen, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(m.listen, (struct sockaddr *)&m.self))
		die("rdma_bind_addr");
	if (rdma_listen(m.listen, 1024))
		die("rdma_listen");
	say("listening %u\n", port);

	pfd[0] = (struct pollfd){ .fd = m.ch->fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	for (;;) {
		struct signalfd_siginfo si;
		static bool started;

		if (m.n_active && !started && !m.go_wait) {
			started = true;
			say("started %lld\n", now_ms());
		}
		timeout = m.n_active ? start_due() : -1;
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
			die("poll");
		if (pfd[0].revents)
			handle_events();
		if (!pfd[1].revents || read(sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGUSR1) {
			drop_all();
			continue;
		}
		if (si.ssi_signo == SIGUSR2) {
			m.go_wait = false;
			continue;
		}
		if (si.ssi_signo == SIGHUP) {
			m.frozen = true;
			print_counts();
			continue;
		}
		break;
	}
	for (i = 0; i < m.n_active; i++)
		if (m.links[i].state != IDLE)
			drop_link(&m.links[i], 0);
	return 0;
}
