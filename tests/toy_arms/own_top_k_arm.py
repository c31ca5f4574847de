"""A retrieval arm that takes the study's [parity] but recalls under its own top-k (3) anyway: an
arm the load-time check cannot catch (its environment sets nothing), which the audit must find
in its captured requests (harness/checks/audit/parity.py)."""

from __future__ import annotations

from arms.retrieval import RetrievalArm
from arms.seam import OpenSession
from arms.server import main


class OwnTopK(RetrievalArm):
    async def open_session(self, session: OpenSession) -> None:
        parity = session.parity
        if parity is not None:  # every field kept but top_k, which the arm drops
            session = session.model_copy(
                update={"parity": parity.model_copy(update={"top_k": None})}
            )
        await super().open_session(session)


if __name__ == "__main__":
    main(OwnTopK)
