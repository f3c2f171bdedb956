/*
 * The claim / commit / delivery / release protocol of one partition,
 * checked with SPIN. README.md maps every step to the Go code and lists
 * bounds and properties.
 *
 * ZooKeeper is one linearizable store: every request is one atomic step
 * (a Multi applies all of its operations or none). The requests of one
 * client are separate steps, so anything may happen between them. Kafka's
 * group offset (-DDUAL) is a second store: last writer wins, no fence.
 *
 * Flags (spin -a -DFLAG):
 *   N=2|3             instances (default 2)
 *   LIVE              liveness run: bounds that would block a claim become
 *                     assertions, so a cut-off is never mistaken for progress
 *   DUAL              dual offset storage: the ZooKeeper offset node and
 *                     Kafka's group offset; a claim starts at the higher
 *   NO_FAST_RELEASE   the release always reads the owner node first (the
 *                     code before the fast path)
 *   OWNER_V0          claims create the owner node at version 0 (the code
 *                     before; no fast path then: the version is not >= 1)
 *   UPSTREAM          an upstream member (or an operator's tool) creates
 *                     the owner node at version 0 when none exists, and
 *                     deletes it later; it never touches the epoch
 *   -- variants that must fail (bugs, old code, findings) --
 *   BUG_RELEASE_NOEPOCH   release deletes the owner node with its version
 *                     (the same for every node of ours) and without the
 *                     epoch check
 *   BUG_FAST_RELEASE_ANY_VERSION  the fast release deletes the owner node
 *                     at any version (Delete(owner, -1)), with the epoch check
 *   BUG_NO_INDOUBT    no in-doubt resolution: a failed version check after
 *                     a lost reply is always a conflict
 *   BUG_RESET_NOBUMP  resets do not bump the epoch
 *   DOUBT_ONE         keep one in-doubt record (the latest lost write)
 *   OP_DEL_OFFSET     the operator deletes the offset node without a reset
 *                     (no epoch bump) while no owner node exists
 *   OP_SET_OFFSET     an unfenced SetData of the offset node (no epoch bump)
 *   OP_DEL_EPOCH      the operator deletes the epoch node while no owner
 *                     node exists
 *   OP_UNSAFE         the operator deletes nodes even while an owner node
 *                     exists
 *   RELEASE_NO_FALLBACK   a release refused with "claim lost" (the epoch
 *                     moved) ends the worker: no ReleaseAfterLoss
 *   NO_STOP_CLEANUP   a claim stopped after an attempt in doubt leaves
 *                     whatever that attempt created
 *   NO_MANAGE_CLEANUP the manage loop never sweeps an owner node a worker
 *                     may have left (mayHoldNode)
 *   MAXFAIL=0         no request of ReleaseAfterLoss fails for good (a
 *                     non-retryable error), so nothing is left to a sweep
 *   NO_RECALL_ON_PAUSE    the fence's pause leaves the claim's buffer to
 *                     the handler
 *   NO_FENCE          a cut-off client's session may expire before the
 *                     fence paused delivery
 *   NO_SEND_VALID     the worker does not check, before a hand-over, that
 *                     the claim's session is the current one
 *   CONFLICT_NO_EPOCH a refused commit's conflict read (FetchOffsetVersion)
 *                     is not followed by a read of the epoch (the order
 *                     before kazoo's offsetConflict)
 *   REWIND            the owner may rewind (RewindOffsetFenced: a stored
 *                     offset past the log's end), a reset of its own
 *   DUAL_RESET        with DUAL: a reset of both stores while members run
 *   KAFKA_NO_RECHECK  with DUAL: a failed Kafka commit is sent again
 *                     without checking the claim again
 *   KAFKA_ONLY        with DUAL: offsets in Kafka only (no offset node)
 */

#ifndef N
#define N 2
#endif
#define OPR      N        /* writer id of the operator */
#define NOV      255      /* version -1: no node; no value */
#define NOBODY   255
#ifndef MAXOFF
#define MAXOFF   3        /* offsets 0..MAXOFF */
#endif
#ifndef NB
#define NB       1        /* a claim's buffer: messages handed out, not read yet */
#endif
#ifndef MAXSESS
#define MAXSESS  (N+2)    /* sessions ever: N + 2 expiries or restarts */
#endif
#ifndef MAXLOST
#define MAXLOST  2        /* replies lost */
#endif
#ifndef MAXRESET
#define MAXRESET 1        /* operator resets */
#endif
#ifndef MAXREB
#define MAXREB   1        /* rebalances (assignment moves) */
#endif
#ifndef MAXOPDEL
#define MAXOPDEL 1        /* operator deletions of nodes */
#endif
#ifndef MAXCUT
#define MAXCUT   1        /* clients cut off from the ZooKeeper leader */
#endif
#ifndef MAXKFAIL
#define MAXKFAIL 1        /* failed Kafka commits */
#endif
#ifndef MAXFAIL
#define MAXFAIL  0        /* requests of ReleaseAfterLoss that fail for good */
#endif
#ifndef MAXUP
#define MAXUP    1        /* (UPSTREAM) owner nodes created by an upstream member */
#endif
#ifdef OWNER_V0
#define OWNV     0        /* the version of an owner node our claim creates */
#else
#define OWNV     1        /* Create, then SetData(owner, id, version 0) in the claim's Multi */
#endif
#ifdef LIVE
#define MAXEPOCH 40
#define ROOM     true
#define CHECKROOM assert(ep_ver < MAXEPOCH && (!off_ex || off_ver < MAXVER))
#else
#define ROOM     (ep_ver < MAXEPOCH)
#define CHECKROOM skip
#define MAXEPOCH 8        /* epoch node versions 0..MAXEPOCH */
#endif
#define MAXVER   8        /* offset node versions */

/* ---------------- ZooKeeper ---------------- */
bool live[MAXSESS+1];      /* session s is live; 0 is no session */
byte sessInst[MAXSESS+1];  /* the instance that opened session s (ghost) */
byte sess[N];              /* the session instance i's client runs now */
byte nextSess = 1;

bool own_ex; byte own_data; byte own_eph;   /* owner node */
bool own_ver;                               /* its version: OWNV if our claim created it, 0 if upstream's */
bool ep_ex;  byte ep_ver;                   /* epoch node */
bool off_ex; byte off_val; byte off_ver; byte off_czx; /* offset node */
byte czxids;                                /* offset node creations */

/* ---------------- Kafka ---------------- */
#ifdef DUAL
byte kval = NOV;           /* Kafka's committed offset of the group: last writer wins */
byte nkfail;
bool reg[N];               /* instance i is registered (a reset with Kafka storage is refused while any is) */
#define REG(i) reg[i]
#else
#define REG(i) true
#endif

/* ---------------- environment ---------------- */
byte assigned;             /* the instance the partition is assigned to */
byte nlost, nreset, nreb, nopdel, ncut, nfail;
#ifdef UPSTREAM
byte nup;
#endif
byte cut[N];               /* 0: i's client reaches the leader; 1: cut off; 2: cut off, delivery paused */

/* ---------------- ghosts ---------------- */
byte latestI = NOBODY, latestS, latestE; /* the latest claim: instance, session, epoch */
bool doubtApplied[N];      /* i's in-doubt write is the offset node's last write */
byte resetGen, seenGen[N]; /* resets ever; the reset i has read the offset after */
byte hiC;                  /* highest offset committed (to any store) since the last reset */

/* ---------------- instances ---------------- */
mtype = { IDLE, CLAIM, CLAIMIN, CPOST, REPOCH, ROWNER, RBUMP, RSTALE, READOFF, READK, OWN,
          CREAD, CEPOCH, RELFAST, RELGET, RELEX, RELDEL, RALEP, RALGET, RALDEL };
mtype st[N];
byte cE[N], cSid[N];       /* the claim: epoch, session (RAL*: the session whose node to delete) */
byte tsid[N], tev[N];      /* a claim attempt: its session; the epoch read */
bool ov[N];                /* the owner node's version: the claim's (created, or read by
                              resolveClaimed), then the one a release's read found */
bool cdoubt[N];             /* the last call of Claim was in doubt (doubtAfter) */
byte pos[N];               /* next offset to commit (marked) */
byte buf[N];               /* messages in the claim's buffer: offsets pos .. pos+buf-1 */
bool dirty[N];             /* pos not committed yet */
byte ver[N], czx[N];       /* offset node version expected, its czxid (0 unknown) */
bool dfl[N];               /* a write is in doubt */
byte dmask[N], dver[N], dczx[N]; /* its values (bit set), expected version, czxid */
bool rex[N]; byte rv[N], rver[N], rczx[N]; /* the offset node as a conflict read it */
bool rda[N], rgen[N];      /* at that read: doubtApplied[i], no reset unread (ghosts) */
bool mayHold[N];           /* mayHoldNode: an ended worker may have left an owner node (to sweep) */
#ifdef DUAL
byte cmt[N];               /* tracker.committed: what the claim last stored (NOV: none) */
byte kknown[N];            /* kafka.next: what the claim thinks Kafka holds */
byte kfl[N];               /* a Kafka commit checked and sent (2: by a worker that has ended) */
byte ktgt[N], kseen[N];    /* its value; seenGen at the check (ghost) */
#endif

#define zombie(i)   (cSid[i] != sess[i])
#define latest(i)   (latestI == i && latestS == cSid[i] && latestE == cE[i]) /* i holds the latest claim */
#ifdef KAFKA_ONLY
#define KDUE(i)     (dirty[i])
#define KTARGET(i)  (pos[i])
#else
/* kafkaDue: what the claim stored differs from what it last wrote (or
 * read at the claim), or Kafka was seen holding something else since */
#define KDUE(i)     (cmt[i] != NOV && (kknown[i] != cmt[i] || kval != cmt[i]))
#define KTARGET(i)  (cmt[i])
#endif
#ifdef NO_SEND_VALID
#define SENDVALID(i) true
#else
#define SENDVALID(i) (!zombie(i))  /* sendIf's valid(): the claim's session is the current one */
#endif
#define up(i)       (cut[i] == 0)
#define nextVer(v)  ((v) == NOV -> 0 : (v) + 1)
#define raiseHi(x)    if :: (x) > hiC -> hiC = (x) :: else -> skip fi

/* a lost reply: the instance cannot tell whether its request applied */
#define loseReply(l) if :: nlost < MAXLOST -> nlost++; l = 1 :: true -> l = 0 fi

inline clearDoubt(i) {
	dfl[i] = 0; dmask[i] = 0; dver[i] = 0; dczx[i] = 0; doubtApplied[i] = 0
}

inline clearRead(i) {
	rex[i] = 0; rv[i] = 0; rver[i] = 0; rczx[i] = 0; rda[i] = 0; rgen[i] = 0
}

/* the worker ends: nothing held any more. The buffer is taken back (a
 * recall before the release, or the process is gone). A Kafka commit in
 * flight (kfl) is not undone: it may still land. */
inline toIdle(i) {
	st[i] = IDLE; cE[i] = 0; cSid[i] = 0; tsid[i] = 0; tev[i] = 0;
	cdoubt[i] = 0; ov[i] = 0;
	pos[i] = 0; buf[i] = 0; dirty[i] = 0; ver[i] = 0; czx[i] = 0;
	seenGen[i] = 0;
#ifdef DUAL
	cmt[i] = 0; kknown[i] = 0;
	if :: kfl[i] == 1 -> kfl[i] = 2 :: else -> skip fi; /* in flight, its worker gone */
#endif
	clearDoubt(i); clearRead(i)
}

/* ReleaseAfterLoss of the owner node held by id i under session s */
inline toRAL(i, s) {
	rs = s; toIdle(i); cSid[i] = rs; st[i] = RALEP; rs = 0
}

/* any other write to the offset node: no in-doubt write is its last */
inline otherWrite() {
	byte k = 0;
	do
	:: k < N -> doubtApplied[k] = 0; k++
	:: else -> break
	od;
	k = 0
}

inline newSession(i) {
	live[nextSess] = 1; sessInst[nextSess] = i; sess[i] = nextSess; nextSess++
}

/* session s ends: ZooKeeper deletes its ephemeral nodes */
inline expire(s) {
	live[s] = 0;
	if
	:: own_ex && own_eph == s -> own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0
	:: else -> skip
	fi
}

/* the claim is lost (the epoch moved): take the buffer back, then release
 * after the loss, unless the session holding it is gone (nothing to do) */
inline claimLost(i) {
	if
	:: zombie(i) -> toIdle(i)
	:: else -> toRAL(i, cSid[i])
	fi
}

/* the epoch-fenced release (claim.Claimer.Release) failed: refused with
 * "claim lost", or not through within ReleaseTimeout: the node may still be
 * ours (releaseIfOurs) */
#ifdef RELEASE_NO_FALLBACK
#define releaseLost(i) toIdle(i)
#else
#define releaseLost(i) toRAL(i, cSid[i])
#endif
#ifdef NO_MANAGE_CLEANUP
#define SWEPT(i) true
#else
#define SWEPT(i) (!mayHold[i])  /* a worker for the partition waits for the sweep */
#endif

/* the commit loop resolves an *OffsetConflictError (commitFenced): a write
 * in doubt found (version v+1, a value among the in-doubt ones, same czxid
 * when known) is ours: no seek, no report; otherwise adopt the stored
 * offset, seek (the buffer is taken back) and report */
#ifdef BUG_NO_INDOUBT
#define DOUBTMATCH(i) false
#else
#define DOUBTMATCH(i) (dfl[i] && rex[i] && rver[i] == nextVer(dver[i]) && (dmask[i] & (1 << rv[i])) && \
                       (dczx[i] == 0 || dczx[i] == rczx[i]))
#endif
inline resolveConflict(i) {
	if
	:: DOUBTMATCH(i) ->
		/* (4) resolved as ours only if it was ours */
		assert(rda[i] && rgen[i]); /*(4)*/
		ver[i] = rver[i]; czx[i] = rczx[i];
		dirty[i] = (pos[i] != rv[i]);
#ifdef DUAL
		cmt[i] = rv[i];
#endif
		clearDoubt(i)
	:: else ->
		/* (4) a conflict is reported only when someone else wrote */
		assert(!rda[i]); /*(4)*/
		if
		:: rex[i] -> pos[i] = rv[i]; ver[i] = rver[i]; czx[i] = rczx[i]
		:: else -> pos[i] = 0; ver[i] = NOV; czx[i] = 0
		fi;
#ifdef DUAL
		if :: rex[i] -> cmt[i] = rv[i] :: else -> cmt[i] = NOV fi;
#endif
		buf[i] = 0; dirty[i] = 0; seenGen[i] = resetGen; clearDoubt(i)
	fi;
	clearRead(i); st[i] = OWN
}

/* the claim holds from here: state of a fresh claim (epoch e, session s) */
inline gotClaim(i, e, s) {
	cE[i] = e; cSid[i] = s; cdoubt[i] = 0;
	tev[i] = 0; st[i] = CPOST
}

proctype Instance(byte i)
{
	bool l;
	byte e, rs;
end:
	do
	/* ---- the session fence: cut off, the next step pauses delivery and takes the buffer back ---- */
	:: atomic { cut[i] == 1 -> cut[i] = 2;
#ifndef NO_RECALL_ON_PAUSE
		buf[i] = 0            /* recallOnPause: restart at the marked offset */
#else
		skip
#endif
		}

	/* ---- the handler reads a message from the claim's buffer and marks it ---- */
	:: atomic { buf[i] > 0 ->
		/* (5) one deliverer: only the latest claim hands messages to an application */
		assert(latest(i)); /*(5)*/
		buf[i]--; pos[i]++; dirty[i] = 1 }

	/* ---- Claim: Multi(Create(owner, EPHEMERAL, id), SetData(epoch, -1)) ---- */
	:: atomic { up(i) && st[i] == IDLE && assigned == i && REG(i) && SWEPT(i) -> st[i] = CLAIM }
	:: atomic { up(i) && (st[i] == CLAIM || st[i] == CLAIMIN) && (!ep_ex || own_ex || ROOM) ->
		tsid[i] = sess[i];
		if
		:: !ep_ex -> ep_ex = 1; ep_ver = 0; st[i] = CLAIMIN /* NoNode: ensureNode(epoch), again */
		:: ep_ex && own_ex -> st[i] = REPOCH    /* NodeExists: resolveClaimed */
		:: ep_ex && !own_ex ->
			CHECKROOM;
			own_ex = 1; own_data = i; own_eph = sess[i]; own_ver = OWNV; ep_ver++;
			latestI = i; latestS = sess[i]; latestE = ep_ver;
			loseReply(l);
			if
			:: l -> l = 0; cdoubt[i] = 1; st[i] = CLAIM; tsid[i] = 0 /* an error: Claim returns */
			:: else -> ov[i] = OWNV; gotClaim(i, ep_ver, tsid[i])
			fi
		fi }
	/* the claim loop stops between two calls of Claim: the partition moved away */
	:: atomic { up(i) && st[i] == CLAIM && assigned != i ->
#ifndef NO_STOP_CLEANUP
		if
		:: cdoubt[i] -> toRAL(i, sess[i])      /* ErrStoppedInDoubt: cleanUpInDoubtClaim */
		:: else -> toIdle(i)
		fi
#else
		toIdle(i)
#endif
		}
	/* if kz.SessionID() != sid: the session was replaced, whose node is it? */
	:: atomic { up(i) && st[i] == CPOST ->
		if
		:: sess[i] == cSid[i] -> st[i] = READOFF; tsid[i] = 0
		:: else -> toIdle(i); st[i] = CLAIMIN
		fi }
	/* ---- resolveClaimed: read the epoch, then the owner ---- */
	:: atomic { up(i) && st[i] == REPOCH ->
		if
		:: !ep_ex -> ep_ex = 1; ep_ver = 0; st[i] = CLAIMIN; tsid[i] = 0
		:: else -> tev[i] = ep_ver; st[i] = ROWNER
		fi }
	:: atomic { up(i) && st[i] == ROWNER ->
		if
		:: !own_ex -> st[i] = CLAIMIN; tsid[i] = 0; tev[i] = 0        /* the owner left */
		:: own_ex && own_data == i && own_eph == tsid[i] -> ov[i] = own_ver; st[i] = RBUMP /* ours */
		:: own_ex && own_data == i && own_eph != tsid[i] -> ov[i] = own_ver; st[i] = RSTALE /* older session of ours */
		:: own_ex && own_data != i ->                                  /* other's: Claim returns */
			cdoubt[i] = 0; st[i] = CLAIM; tsid[i] = 0; tev[i] = 0
		fi }
	/* ours: Multi(Check(owner, version), SetData(epoch, version read)) */
	:: atomic { up(i) && st[i] == RBUMP && (ROOM || !(own_ex && own_ver == ov[i] && ep_ex && ep_ver == tev[i])) ->
		if
		:: own_ex && own_ver == ov[i] && ep_ex && ep_ver == tev[i] ->
			CHECKROOM;
			ep_ver++; latestI = i; latestS = sess[i]; latestE = ep_ver;
			loseReply(l);
			if
			:: l -> l = 0; cdoubt[i] = 1; st[i] = CLAIM; tsid[i] = 0; tev[i] = 0; ov[i] = 0
			:: else -> gotClaim(i, ep_ver, tsid[i])   /* the claim keeps the version read */
			fi
		:: else -> st[i] = CLAIMIN; tsid[i] = 0; tev[i] = 0; ov[i] = 0 /* refused: again */
		fi }
	/* stale: Multi(Check(epoch, version read), Delete(owner, version)) */
	:: atomic { up(i) && st[i] == RSTALE ->
		if
		:: own_ex && own_ver == ov[i] && ep_ex && ep_ver == tev[i] ->
			/* (3) only our own node of an older session of ours */
			assert(own_data == i && sessInst[own_eph] == i && own_eph != tsid[i]); /*(3)*/
			own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0
		:: else -> skip
		fi;
		st[i] = CLAIMIN; tsid[i] = 0; tev[i] = 0; ov[i] = 0 }

	/* ---- the worker reads the committed offset (FetchOffsetVersion) ---- */
	:: atomic { up(i) && st[i] == READOFF ->
		if
#ifndef KAFKA_ONLY
		:: off_ex -> pos[i] = off_val; ver[i] = off_ver; czx[i] = off_czx
#endif
		:: else -> pos[i] = 0; ver[i] = NOV; czx[i] = 0
		fi;
		seenGen[i] = resetGen;
#ifdef DUAL
		st[i] = READK
#else
		/* (2) a new owner starts at the highest offset committed since the last reset */
		assert(pos[i] >= hiC); /*(2)*/
		st[i] = OWN
#endif
		}
#ifdef DUAL
	/* then Kafka's; start at the higher, and bring the store behind up to it */
	:: atomic { up(i) && st[i] == READK ->
		if :: ver[i] == NOV -> e = NOV :: else -> e = pos[i] fi;   /* what ZooKeeper held */
		if
		:: kval != NOV && (e == NOV || kval > e) -> pos[i] = kval; dirty[i] = 1 /* restartUncommitted + commitStart */
		:: else -> skip
		fi;
		/* (2) the latest claim starts at the highest offset committed since the
		 * last reset (unless a reset came between its two reads: the reset
		 * bumped the epoch, so this claim is lost) */
		assert(!(latest(i) && seenGen[i] == resetGen) || pos[i] >= hiC); /*(2)*/
		if
		:: e == NOV && kval == NOV -> cmt[i] = NOV
		:: else -> cmt[i] = pos[i]
		fi;
		kknown[i] = kval;
		e = 0; st[i] = OWN }
#endif

	/* ---- the worker hands a message to the claim's buffer (gate open, session valid) ---- */
	:: atomic { up(i) && st[i] == OWN && assigned == i && buf[i] < NB && pos[i] + buf[i] < MAXOFF &&
	            SENDVALID(i) -> buf[i]++ }

#ifndef KAFKA_ONLY
	/* ---- commit: Multi(Check(epoch, E), SetData(offset, v)) or Create when v == -1 ---- */
	:: atomic { up(i) && st[i] == OWN && dirty[i] && (!off_ex || off_ver < MAXVER) ->
		if
		:: !ep_ex || ep_ver != cE[i] -> e = 1             /* the epoch moved */
		:: else ->
			if
			:: ver[i] == NOV && !off_ex -> e = 0
			:: ver[i] != NOV && off_ex && off_ver == ver[i] -> e = 0
			:: else -> e = 2                              /* the offset node moved */
			fi
		fi;
		loseReply(l);
		if
		:: e == 0 ->
			/* (1) only the latest claim commits */
			assert(latest(i)); /*(1)*/
			/* (2) no decrease, and never over a reset we have not read */
			assert(!off_ex || pos[i] >= off_val); /*(2)*/
			assert(seenGen[i] == resetGen); /*(2)*/
			otherWrite();
			off_val = pos[i]; raiseHi(pos[i]);
			if
			:: ver[i] == NOV -> off_ex = 1; off_ver = 0; czxids++; off_czx = czxids
			:: else -> off_ver++
			fi
		:: else -> skip
		fi;
		if
		:: l ->                        /* in doubt: remember what it would have written */
			l = 0;
#ifdef DOUBT_ONE
			if
			:: dfl[i] && dver[i] == ver[i] -> dmask[i] = 0
			:: else -> skip
			fi;
#endif
			dfl[i] = 1; dmask[i] = dmask[i] | (1 << pos[i]); dver[i] = ver[i]; dczx[i] = czx[i];
			if :: e == 0 -> doubtApplied[i] = 1 :: else -> skip fi
		:: !l && e == 0 ->
			ver[i] = off_ver;
			if :: ver[i] == 0 -> czx[i] = 0 :: else -> skip fi; /* a create returns no Stat */
#ifdef DUAL
			cmt[i] = pos[i];
#endif
			dirty[i] = 0; clearDoubt(i)
		:: !l && e == 1 -> claimLost(i)                  /* ErrClaimLost: stop */
		:: !l && e == 2 -> st[i] = CREAD      /* the offset node moved: offsetConflict */
		fi;
		e = 0 }

#if defined(REWIND) && !defined(DUAL)
	/* ---- rewindAsReset: Multi(SetData(epoch, version E), SetData(offset, v) | Create):
	 *      a lower offset (0) stored as a reset is, ending the claim ---- */
	:: atomic { up(i) && st[i] == OWN && !zombie(i) && nreset < MAXRESET && ep_ver < MAXEPOCH &&
	            (!off_ex || off_ver < MAXVER) ->
		nreset++;
		if
		:: !ep_ex || ep_ver != cE[i] -> e = 1
		:: else ->
			if
			:: ver[i] == NOV && !off_ex -> e = 0
			:: ver[i] != NOV && off_ex && off_ver == ver[i] -> e = 0
			:: else -> e = 2
			fi
		fi;
		loseReply(l);
		if
		:: e == 0 ->
			assert(latest(i)); /*(1)*/
			assert(seenGen[i] == resetGen); /*(2)*/
			otherWrite(); resetGen++; hiC = 0;
			off_val = 0;
			if
			:: ver[i] == NOV -> off_ex = 1; off_ver = 0; czxids++; off_czx = czxids
			:: else -> off_ver++
			fi;
			ep_ver++
		:: else -> skip
		fi;
		if
		:: l -> l = 0                      /* in doubt: the claim watch finds out */
		:: !l && e != 2 -> claimLost(i)    /* our own reset ended the claim, or another's */
		:: !l && e == 2 -> st[i] = CREAD   /* offsetConflict, as for a commit */
		fi;
		e = 0 }
#endif

	/* ---- offsetConflict: read the offset node (FetchOffsetVersion), then
	 *      the epoch: moved, the claim is lost; else an *OffsetConflictError ---- */
	:: atomic { up(i) && st[i] == CREAD ->
		rex[i] = off_ex; rv[i] = off_val; rver[i] = off_ver; rczx[i] = off_czx;
		if :: !off_ex -> rv[i] = 0; rver[i] = 0; rczx[i] = 0 :: else -> skip fi;
		rda[i] = doubtApplied[i]; rgen[i] = (resetGen == seenGen[i]);
#ifdef CONFLICT_NO_EPOCH
		resolveConflict(i)
#else
		st[i] = CEPOCH
#endif
		}
	:: atomic { up(i) && st[i] == CEPOCH ->
		if
		:: !ep_ex || ep_ver != cE[i] -> claimLost(i)
		:: else -> resolveConflict(i)
		fi }
#endif /* !KAFKA_ONLY */

#ifdef DUAL
	/* ---- Kafka: commitKafka when Kafka is behind what the claim stored:
	 *      kafkaFence (claim not seen lost, session current, gate open) ... ---- */
	:: atomic { up(i) && st[i] == OWN && !zombie(i) && kfl[i] == 0 && KDUE(i) ->
		ktgt[i] = KTARGET(i); kfl[i] = 1; kseen[i] = seenGen[i] }
	/* ... then the OffsetCommit lands, whenever: the instance may be cut
	 * off, its claim gone, its worker ended */
	:: atomic { kfl[i] != 0 ->
		if
		:: nkfail < MAXKFAIL -> nkfail++;     /* refused (coordinator moving): commit again later */
#ifndef KAFKA_NO_RECHECK
			kfl[i] = 0                        /* the next attempt checks the claim again */
#else
			if :: kfl[i] == 2 -> kfl[i] = 0 :: else -> skip fi /* sent again as it is */
#endif
		:: true ->
			/* (2) never over a reset the writer has not read */
			assert(kseen[i] == resetGen); /*(2)*/
			kval = ktgt[i]; raiseHi(ktgt[i]);
			if
			:: kfl[i] == 1 -> kknown[i] = ktgt[i];
#ifdef KAFKA_ONLY
				if :: pos[i] == ktgt[i] -> dirty[i] = 0 :: else -> skip fi;
#endif
				skip
			:: else -> skip
			fi;
			kfl[i] = 0; ktgt[i] = 0; kseen[i] = 0
		fi }
#endif

#ifdef DUAL
	/* ---- the manage loop registers again after an expiry (once the old session's workers are dropped) ---- */
	:: atomic { up(i) && !reg[i] && (st[i] == IDLE || !zombie(i)) -> reg[i] = 1 }
#endif

	/* ---- the claim watch: the epoch moved (a reset) ---- */
	:: atomic { up(i) && st[i] == OWN && !zombie(i) && !(ep_ex && ep_ver == cE[i]) -> claimLost(i) }

	/* ---- the manage loop learns the session was replaced: drop, no commit, no release ---- */
	:: atomic { up(i) && zombie(i) && (st[i] == OWN || st[i] == CREAD || st[i] == CEPOCH ||
	            st[i] == READOFF || st[i] == READK) -> toIdle(i) }

	/* ---- stop: the drain ends (the handler read the buffer, or it is
	 *      taken back), then release; nothing if the session is gone ---- */
	:: atomic { up(i) && st[i] == OWN && assigned != i ->
		buf[i] = 0;
		if
		:: zombie(i) -> toIdle(i)
#ifndef NO_FAST_RELEASE
		:: !zombie(i) && ov[i] >= 1 -> st[i] = RELFAST /* the claim knows its owner node's version */
		:: !zombie(i) && ov[i] == 0 -> st[i] = RELGET
#else
		:: else -> st[i] = RELGET
#endif
		fi }
	/* Release's fast path, its first attempt only: Multi(Check(epoch, E),
	 * Delete(owner, the claim's owner version)), no read first. A node at
	 * that version (>= 1) with the epoch still at E is the one the claim's
	 * Multi created or bumped over: every claim of ours bumps the epoch, an
	 * upstream node is at version 0 */
	:: atomic { up(i) && st[i] == RELFAST ->
		if
#ifdef BUG_FAST_RELEASE_ANY_VERSION
		:: own_ex && ep_ex && ep_ver == cE[i] ->
#else
		:: own_ex && own_ver == ov[i] && ep_ex && ep_ver == cE[i] ->
#endif
			/* (3) only our own node */
			assert(own_data == i && own_eph == cSid[i]); /*(3)*/
			own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0;
			loseReply(l);
			if
			:: l -> l = 0; st[i] = RELGET   /* the read path finds it gone, the epoch at E */
			:: else -> toIdle(i)
			fi
		:: else -> st[i] = RELGET           /* refused (or its reply lost): the read path */
		fi }
	/* Release: Get(owner) */
	:: atomic { up(i) && st[i] == RELGET ->
		if
		:: !own_ex -> st[i] = RELEX
		:: own_ex && (own_data != i || own_eph != cSid[i]) -> releaseLost(i) /* not ours: ErrClaimLost */
		:: own_ex && own_data == i && own_eph == cSid[i] -> ov[i] = own_ver; st[i] = RELDEL
		fi }
	/* gone: released if the epoch is still E (an earlier attempt), else lost */
	:: atomic { up(i) && st[i] == RELEX ->
		if
		:: ep_ex && ep_ver == cE[i] -> toIdle(i)
		:: else -> releaseLost(i)
		fi }
	/* Multi(Check(epoch, E), Delete(owner, version)) */
	:: atomic { up(i) && st[i] == RELDEL ->
		if
#ifdef BUG_RELEASE_NOEPOCH
		:: own_ex && own_ver == ov[i] ->
#else
		:: own_ex && own_ver == ov[i] && ep_ex && ep_ver == cE[i] ->
#endif
			/* (3) only our own node */
			assert(own_data == i && own_eph == cSid[i]); /*(3)*/
			own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0;
			loseReply(l);
			if
			:: l -> l = 0; st[i] = RELGET   /* retried: finds it gone */
			:: else -> toIdle(i)
			fi
#ifndef BUG_RELEASE_NOEPOCH
		:: own_ex && !(ep_ex && ep_ver == cE[i]) ->     /* ErrClaimLost */
			loseReply(l);
			if
			:: l -> l = 0; st[i] = RELGET
			:: else -> releaseLost(i)
			fi
		:: own_ex && own_ver != ov[i] && ep_ex && ep_ver == cE[i] -> st[i] = RELGET /* the node changed: look again */
#else
		:: own_ex && own_ver != ov[i] -> st[i] = RELGET
#endif
		:: !own_ex -> st[i] = RELGET        /* the node went: look again */
		fi }
	/* the release times out (claim.Config.ReleaseTimeout, the granted
	 * session timeout) while the client is cut off */
	:: atomic { cut[i] == 2 && (st[i] == RELFAST || st[i] == RELGET || st[i] == RELEX || st[i] == RELDEL) -> releaseLost(i) }

	/* ---- ReleaseAfterLoss(id i, session cSid): read the epoch, read the
	 *      owner node, Multi(Check(epoch, version read), Delete(owner, version));
	 *      retried until done, the node is gone or not ours, or the session is gone ---- */
	:: atomic { up(i) && st[i] == RALEP ->
		if
		:: zombie(i) -> toIdle(i)
		:: else -> tev[i] = ep_ver; if :: !ep_ex -> tev[i] = NOV :: else -> skip fi; st[i] = RALGET
		fi }
	:: atomic { up(i) && st[i] == RALGET ->
		if
		:: own_ex && own_data == i && own_eph == cSid[i] -> ov[i] = own_ver; st[i] = RALDEL
		:: else -> toIdle(i)                 /* gone, or not ours: nothing to do */
		fi }
	:: atomic { up(i) && st[i] == RALDEL ->
		if
		:: own_ex && own_ver == ov[i] && (tev[i] == NOV || ep_ex && ep_ver == tev[i]) ->
			/* (3) only our own node */
			assert(own_data == i && own_eph == cSid[i]); /*(3)*/
			own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0;
			loseReply(l);
			if
			:: l -> l = 0; st[i] = RALEP     /* retried: finds it gone */
			:: else -> toIdle(i)
			fi
		:: else -> st[i] = RALEP             /* the epoch or the node moved: look again */
		fi }
	/* a request of it fails for good (not IsRetryable): the worker ends
	 * with mayHoldNode set */
	:: atomic { up(i) && (st[i] == RALEP || st[i] == RALGET || st[i] == RALDEL) && nfail < MAXFAIL ->
		nfail++; toIdle(i); mayHold[i] = 1 }

#ifndef NO_MANAGE_CLEANUP
	/* ---- the manage loop sweeps (sweepOwnerNode): no worker for the
	 *      partition, and one that ended may have left an owner node of
	 *      the current session: ReleaseAfterLoss ---- */
	:: atomic { up(i) && st[i] == IDLE && mayHold[i] -> mayHold[i] = 0; toRAL(i, sess[i]) }
#endif

	/* ---- the process crashes and restarts: new session, the old one lives on ---- */
	:: atomic { nextSess <= MAXSESS && st[i] != IDLE -> toIdle(i); cut[i] = 0; mayHold[i] = 0; newSession(i) }
	od
}

/* Operator, assignment, the clients' links and session expiry: each bounded. */
#ifdef OP_UNSAFE
#define OPOK true
#else
#define OPOK (!own_ex)     /* no owner node exists */
#endif
#if defined(DUAL) && !defined(DUAL_RESET)
/* a reset with Kafka storage is refused while any other member is registered */
#if N > 2
#define RESETOK (nreset < MAXRESET && !reg[0] && !reg[1] && !reg[2])
#else
#define RESETOK (nreset < MAXRESET && !reg[0] && !reg[1])
#endif
#else
#define RESETOK (nreset < MAXRESET)
#endif
#ifdef NO_FENCE
#define EXPIRABLE(j) (cut[j] != 0)
#else
#define EXPIRABLE(j) (cut[j] == 2)   /* the fence paused before the leader could expire it */
#endif
#define CUT(j)    :: atomic { ncut < MAXCUT && cut[j] == 0 -> ncut++; cut[j] = 1 }
#define HEAL(j)   :: atomic { cut[j] == 2 -> cut[j] = 0 }
#ifdef DUAL
#define UNREG(j)  reg[j] = 0    /* the registration went with the session */
#else
#define UNREG(j)  skip
#endif
#define EXPIRE(j) :: atomic { EXPIRABLE(j) && nextSess <= MAXSESS -> expire(sess[j]); UNREG(j); newSession(j); cut[j] = 0; mayHold[j] = 0 }
proctype Env()
{
end:
	do
	/* a rebalance moves the partition */
	:: atomic { nreb < MAXREB -> nreb++; assigned = (assigned + 1) % N }
	/* instance j's client is cut off from the leader; the link heals, or
	   the leader expires the session and the client opens a new one */
	CUT(0) CUT(1) HEAL(0) HEAL(1) EXPIRE(0) EXPIRE(1)
#if N > 2
	CUT(2) HEAL(2) EXPIRE(2)
#endif
#ifndef DUAL
	/* reset: Multi(Delete(offset) | SetData(offset) | re-create, SetData(epoch, -1)) */
	:: atomic { RESETOK && ep_ex && ep_ver < MAXEPOCH ->
		nreset++; resetGen++;
		otherWrite();
		if
		:: off_ex -> off_ex = 0; off_val = 0; off_ver = 0; off_czx = 0; hiC = 0   /* ResetOffsets */
		:: off_ex && off_ver < MAXVER -> off_val = MAXOFF; off_ver++; hiC = MAXOFF /* set */
		:: !off_ex -> off_ex = 1; off_val = MAXOFF; off_ver = 0; czxids++; off_czx = czxids; hiC = MAXOFF /* create */
		:: off_ex -> off_val = MAXOFF; off_ver = 0; czxids++; off_czx = czxids; hiC = MAXOFF /* delete + create */
		fi;
#ifndef BUG_RESET_NOBUMP
		ep_ver++
#else
		skip
#endif
		}
#else
	/* Offsets.ResetOffsets with Kafka in the storage (resetWithKafka): the
	   group's Kafka offsets deleted, then ResetOffsets in ZooKeeper */
	:: atomic { RESETOK && ep_ex && ep_ver < MAXEPOCH ->
		nreset++; resetGen++;
		otherWrite();
		kval = NOV;
		off_ex = 0; off_val = 0; off_ver = 0; off_czx = 0; hiC = 0;
		ep_ver++ }
#endif
	/* a fenced set (ResetOffset) on a partition never claimed: no epoch node
	   yet, so Multi(SetData | Create(offset), Create(epoch)); a claim that
	   creates the epoch node first makes it fail (the branch above then) */
#ifndef DUAL
	:: atomic { RESETOK && !ep_ex && (!off_ex || off_ver < MAXVER) ->
		nreset++; resetGen++;
		otherWrite();
		if
		:: off_ex -> off_val = MAXOFF; off_ver++                            /* set */
		:: !off_ex -> off_ex = 1; off_val = MAXOFF; off_ver = 0; czxids++; off_czx = czxids /* create */
		fi;
		hiC = MAXOFF;
		ep_ex = 1; ep_ver = 0 }
#endif
#ifdef OP_DEL_OFFSET
	/* the operator deletes the offset node without bumping the epoch */
	:: atomic { nopdel < MAXOPDEL && off_ex && OPOK -> nopdel++; resetGen++; otherWrite();
		off_ex = 0; off_val = 0; off_ver = 0; off_czx = 0; hiC = 0 }
#endif
#ifdef OP_SET_OFFSET
	/* an unfenced write of the offset (CommitOffset, an operator tool): no epoch bump */
	:: atomic { nopdel < MAXOPDEL && off_ex && off_ver < MAXVER -> nopdel++; resetGen++; otherWrite();
		if :: off_val = 0 :: off_val = MAXOFF fi; off_ver++; hiC = off_val }
#endif
#ifdef UPSTREAM
	/* an upstream member (or an operator's tool) creates the owner node, at
	   version 0, when none exists, and deletes it later; the epoch stays */
	:: atomic { nup < MAXUP && !own_ex -> nup++; own_ex = 1; own_data = OPR; own_eph = 0; own_ver = 0 }
	:: atomic { own_ex && own_data == OPR -> own_ex = 0; own_data = 0; own_eph = 0; own_ver = 0 }
#endif
#ifdef OP_DEL_EPOCH
	/* the operator deletes the epoch node */
	:: atomic { nopdel < MAXOPDEL && ep_ex && OPOK -> nopdel++; ep_ex = 0; ep_ver = 0 }
#endif
	od
}

/* ZooKeeper expires the sessions of crashed processes (no heartbeats). */
#define orphan(s) (live[s] && s != sess[0] && s != sess[1] && s != sess[N-1])
proctype Reaper()
{
end:
	do
	:: atomic { orphan(1) -> expire(1) }
	:: atomic { orphan(2) -> expire(2) }
#if MAXSESS > 2
	:: atomic { orphan(3) -> expire(3) }
#endif
#if MAXSESS > 3
	:: atomic { orphan(4) -> expire(4) }
#endif
#if MAXSESS > 4
	:: atomic { orphan(5) -> expire(5) }
#endif
#if MAXSESS > 5
	:: atomic { orphan(6) -> expire(6) }
#endif
	od
}

init {
	atomic {
		byte k = 0;
		do
		:: k < N -> newSession(k); st[k] = IDLE;
#ifdef DUAL
			reg[k] = 1;
#endif
			k++
		:: else -> break
		od;
		k = 0;
		run Env();
		run Reaper();
		k = 0;
		do
		:: k < N -> run Instance(k); k++
		:: else -> break
		od;
		k = 0
	}
}

/* liveness: once the faults are spent, the assigned instance owns the partition */
#define owned (own_ex && own_data == assigned && st[assigned] == OWN)
#ifdef LIVE
ltl live { <> [] owned }
#endif
