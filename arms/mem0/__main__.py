"""`python -m arms.mem0 [--host H] [--port P]`: serve the mem0 engine arm over the seam."""

from arms.mem0 import Mem0Arm
from arms.server import main

if __name__ == "__main__":
    main(Mem0Arm)
