"""Deep Clustering Network (DCN; Yang, Fu, Sidiropoulos & Hong, ICML 2017).

The deep-learning baseline of the Semantic-NMF paper (Neurocomputing 2022, §5.2, Table 2):
an autoencoder whose latent space is made "k-means friendly" by training it jointly with
k-means. It needs PyTorch, an optional dependency (``pip install "semnmf[deep]"``); this
module imports without it, and :class:`DCN` says what to install when it is fitted.

Notation (Yang et al. 2017, arXiv:1610.04794): ``f`` is the encoder, ``g`` the decoder,
``M = [m_1 … m_K]`` the centroids in the latent space, ``s_i`` the one-hot assignment of
document ``x_i``. DCN minimizes (their eq. (3))::

    min_{f, g, M, {s_i}}  Σ_i  ‖x_i − g(f(x_i))‖²  +  (λ/2) ‖f(x_i) − M s_i‖²
    s.t. s_i ∈ {0, 1}^K, 1ᵀ s_i = 1

by alternating stochastic optimization (their §4, Algorithm 1) after an autoencoder
pretraining and a k-means initialization of ``M`` and ``{s_i}`` on the pretrained codes.

Equation numbers are those of arXiv:1610.04794v2 (the DCN paper is not in the project's
paper folder): (3) the joint objective, (4) the per-sample network subproblem, (5) its
SGD step, (6) the assignment update, (7) the centroid update.
"""

import contextlib
import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._utils.progress import progress
from .._utils.validation import FLOAT_DTYPES, check_matrix, check_n_components

__all__ = ["DCN"]

INSTALL_HINT = 'pip install "semnmf[deep]"'
DEFAULT_MAX_THREADS = 2  # default cap on PyTorch's intra-op threads during DCN
_EVAL_BATCH = 1024     # rows per block when encoding / evaluating without gradients


def _require_torch():
    """Import and return :mod:`torch`, or raise an ImportError that says how to get it."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "DCN needs PyTorch, an optional dependency of semnmf. Install it with "
            f"{INSTALL_HINT} (the CPU build is enough: add "
            "--extra-index-url https://download.pytorch.org/whl/cpu)."
        ) from exc
    return torch


@contextlib.contextmanager
def _torch_session(torch, seed, n_threads=None):
    """Run torch code reproducibly and politely.

    ``n_threads`` intra-op threads (default: at most ``DEFAULT_MAX_THREADS``) and a
    private copy of torch's global CPU generator seeded with ``seed`` (``fork_rng``);
    the caller's thread count and RNG state are restored on exit.

    ``torch.use_deterministic_algorithms`` stays off (its first call takes seconds): the
    CPU kernels used here are deterministic for a fixed thread count (tested).
    """
    threads = torch.get_num_threads()
    if n_threads is None:
        n_threads = max(1, min(DEFAULT_MAX_THREADS, threads))
    torch.set_num_threads(int(n_threads))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            yield
    finally:
        torch.set_num_threads(threads)


def _dense_block(X, rows, dtype=np.float32):
    """Rows of X (CSR or ndarray) as a dense array: only a mini-batch is densified."""
    block = X[rows]
    if sp.issparse(block):
        block = block.toarray()
    block = np.ascontiguousarray(block, dtype=dtype)
    if not block.flags.writeable:  # a view of read-only input: torch wants writable memory
        block = block.copy()
    return block


def _build_autoencoder(torch, n_features, hidden_layer_sizes, latent_dim):
    """Encoder ``f``: n_features → hidden… → latent_dim, decoder ``g``: the mirror image.

    ReLU after every hidden layer; the code layer and the reconstruction layer are
    linear (as in DCN's reference implementation and DEC's architecture), so codes
    and reconstructions can take any sign.

    Weights are Glorot-uniform and biases zero (Keras' default, which the DEC and DCN
    re-implementations use), so a first layer of 500 units fed with unit-mean-square
    inputs (see :func:`_input_scale`) and the 500 → d output layer both start with
    activations of order one.
    """
    nn = torch.nn
    sizes = [n_features, *hidden_layer_sizes, latent_dim]

    def stack(dims):
        layers = []
        for i in range(len(dims) - 1):
            linear = nn.Linear(dims[i], dims[i + 1])
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)
            layers.append(linear)
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    return nn.ModuleDict({"encoder": stack(sizes), "decoder": stack(sizes[::-1])})


def _input_scale(X):
    """Factor ``s`` that gives the entries of ``s·X`` a mean square of 1.

    DCN's networks see ``f(x) = f̃(s·x)`` and ``g(z) = g̃(z)/s``: the same model class,
    better conditioned. Weight initializations assume unit-variance inputs, while a
    unit-length TF-IDF row of d terms has entries of mean square 1/d: unscaled, most ReLUs
    die within one epoch and all documents get the same code (NG5: NMI 0). DCN's
    reference code rescales its MNIST input too (by 5.1). Reconstruction errors, ``lam``
    and all reported losses stay in the units of ``X``.
    """
    n_samples, n_features = X.shape
    values = X.data if sp.issparse(X) else X
    total = float(np.square(values, dtype=np.float64).sum())
    if total <= 0:
        return 1.0
    return float(np.sqrt(n_samples * n_features / total))


def _make_optimizer(torch, solver, parameters, learning_rate):
    if solver == "sgd":  # the reference implementation's choice: Nesterov momentum 0.9
        return torch.optim.SGD(parameters, lr=learning_rate, momentum=0.9, nesterov=True)
    return torch.optim.Adam(parameters, lr=learning_rate)


def _squared_distances(Z, centers):
    """(n, K) matrix of ‖z_i − m_k‖², computed as differences (no cancellation)."""
    return ((Z[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)


def _incremental_centroid_update(centers, counts, Z, labels):
    """DCN's centroid update (Yang et al. 2017, eq. (7)) for a mini-batch: ``centers``
    (K x latent_dim) and ``counts`` (K,), float64, updated in place from the codes ``Z``
    of the batch and their ``labels``.

    For each sample ``z_i`` assigned to cluster ``k`` (in batch order)::

        c_k ← c_k + 1,      m_k ← m_k − (1/c_k) (m_k − z_i)

    (the count incremented first, as in the reference code). ``m_k`` stays the running
    mean of everything it absorbed, so the closed form over the ``r_k`` samples of the
    batch is what is computed::

        m_k ← (c_k m_k + Σ_{i: s_i = k} z_i) / (c_k + r_k),   c_k ← c_k + r_k
    """
    n_clusters = centers.shape[0]
    hits = np.bincount(labels, minlength=n_clusters).astype(np.float64)
    sums = np.zeros_like(centers)
    np.add.at(sums, labels, np.asarray(Z, dtype=np.float64))
    touched = hits > 0
    new_counts = counts[touched] + hits[touched]
    centers[touched] = ((counts[touched, None] * centers[touched] + sums[touched])
                        / new_counts[:, None])
    counts[touched] = new_counts
    return centers, counts


class DCN(ClusterMixin, TransformerMixin, BaseEstimator):
    """Deep Clustering Network: joint autoencoder and k-means (Yang et al., ICML 2017).

    Requires PyTorch (``pip install "semnmf[deep]"``, CPU build). The Semantic-NMF paper
    uses it as its deep-learning baseline (Table 2) without reporting its settings; the
    defaults here are DCN's own MNIST architecture (d-500-500-2000-10, also DEC's).

    Fitting runs three stages: **pretraining** of the autoencoder (Yang et al. §4.1);
    **initialization** of ``M`` and ``s_i`` by k-means on the codes; **joint training**
    (§4.2, Algorithm 1), minimizing eq. (3) / n by block-coordinate steps on each shuffled
    mini-batch: assignments (eq. 6), incremental centroids (eq. 7) and one optimizer step
    on the network (eqs. 4-5). Documents go to the nearest centroid in the latent space;
    :meth:`transform` returns the latent codes ``f(x)``.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters K (the SN paper's g).
    hidden_layer_sizes : tuple of int or int, default=(500, 500, 2000)
        Widths of the encoder's hidden layers; the decoder mirrors them. An int is one
        hidden layer; ``()`` gives a linear autoencoder.
    latent_dim : int, default=10
        Dimension of the code ``f(x)`` in which k-means runs.
    cluster_weight : float, default=1.0
        Weight λ of the clustering (k-means) term of eq. (3) (``lam`` in 0.1). With
        ``lam_scale="relative"``: λ = ``lam_ = cluster_weight · R₀ / K₀``, ``R₀`` the mean
        reconstruction error after pretraining and ``K₀`` the codes' mean squared distance
        to their centroid (``cluster_weight=2``: both terms weigh the same at the start).
    lam_scale : {"relative", "absolute"}, default="relative"
        "absolute": ``cluster_weight`` is eq. (3)'s λ as is.
    pretrain_epochs : int, default=50
        Epochs of autoencoder pretraining (0 skips it: k-means then runs on the codes of
        the randomly initialized encoder).
    max_iter : int, default=50
        Epochs of joint training (0 stops after the k-means initialization, which is
        the "SAE+KM" baseline of the DCN paper).
    batch_size : int, default=256
        Documents per mini-batch; only a mini-batch of a sparse ``X`` is made dense.
    learning_rate : float, default=1e-3
        Step size of the network's optimizer, in both phases.
    solver : {"adam", "sgd"}, default="adam"
        Network optimizer. ``"sgd"`` is SGD with Nesterov momentum 0.9, as in DCN's
        reference code; Adam is insensitive to the scale of the input.
    n_threads : int or None, default=None
        PyTorch intra-op threads during fit and inference; None uses at most 2 (fewer
        if PyTorch is configured with fewer).
    random_state : int, RandomState instance or None, default=None
        Seeds the network, the shuffling and k-means (bit-for-bit on one machine and
        PyTorch build).
    verbose : int, default=0
        Show progress bars (on stderr) with the losses when > 0.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Nearest centroid of each training document at the end of training.
    cluster_centers_ : ndarray of shape (n_components, latent_dim)
        Centroids ``M`` (as rows) in the latent space.
    cluster_counts_ : ndarray of shape (n_components,)
        Counts ``c_k`` of the incremental centroid update at the end of training.
    lam_ : float
        The λ of eq. (3) that was used (``cluster_weight`` itself when
        ``lam_scale="absolute"``).
    autoencoder_ : torch.nn.ModuleDict
        The trained network, with modules ``"encoder"`` and ``"decoder"``:
        ``f(x) = encoder(input_scale_ * x)`` and ``g(z) = decoder(z) / input_scale_``.
    input_scale_ : float
        Fixed input scaling ``s`` that gives the entries of ``s·X`` (training data) a
        mean square of 1 (see Notes).
    pretrain_loss_history_ : ndarray of shape (pretrain_epochs + 1,)
        Mean reconstruction error ``(1/n) Σ ‖x_i − g(f(x_i))‖²`` over the whole data
        before pretraining and after every pretraining epoch.
    objective_, objective_history_ : float, ndarray of shape (n_iter_ + 1,)
        Eq. (3) divided by n, over the whole data with each document assigned to its
        nearest centroid, at the k-means initialization and after every joint epoch.
    reconstruction_err_ : float
        Mean reconstruction error at the end of training.
    n_iter_ : int
        Number of joint-training epochs run (``max_iter``).
    n_features_in_ : int
        Number of features (terms) seen during :meth:`fit`.

    Notes
    -----
    Deviations from Yang et al. (2017), and choices where the paper is silent:

    - Pretraining is end-to-end on the reconstruction loss, not greedy layer-wise.
    - Within a mini-batch the block updates run assignment → centroids → network
      (Algorithm 1: network → assignment → centroids), the same cyclic scheme entered
      at another block, so one forward pass serves all three.
    - The counts ``c_k`` start at the k-means cluster sizes (the reference code: 100).
    - The network sees ``s·x`` and its output is divided by ``s`` (see
      ``input_scale_``), without which the ReLUs of a network fed unit-length TF-IDF
      rows die within an epoch.
    - ``lam_scale="relative"`` (default) is an addition; ``"absolute"`` is the paper's.
    - The losses are eq. (3) divided by n, so ``learning_rate`` does not depend on the
      number of documents.

    The joint objective is not monotone under stochastic steps. PyTorch's thread count
    and global RNG state are restored after the fit.

    References
    ----------
    B. Yang, X. Fu, N. D. Sidiropoulos and M. Hong, "Towards K-means-friendly spaces:
    Simultaneous deep learning and clustering", ICML 2017, pp. 3861-3870
    (arXiv:1610.04794).

    Examples
    --------
    >>> from semnmf.models.deep import DCN
    >>> model = DCN(n_components=3, hidden_layer_sizes=(32,), latent_dim=3,
    ...             pretrain_epochs=30, max_iter=10, random_state=0)  # doctest: +SKIP
    >>> labels = model.fit_predict(X_tfidf)                            # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like",
                               Interval(numbers.Integral, 1, None, closed="left")],
        "latent_dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "cluster_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
        "pretrain_epochs": [Interval(numbers.Integral, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver": [StrOptions({"adam", "sgd"})],
        "n_threads": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_components=8,
        *,
        hidden_layer_sizes=(500, 500, 2000),
        latent_dim=10,
        cluster_weight=1.0,
        lam_scale="relative",
        pretrain_epochs=50,
        max_iter=50,
        batch_size=256,
        learning_rate=1e-3,
        solver="adam",
        n_threads=None,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.hidden_layer_sizes = hidden_layer_sizes
        self.latent_dim = latent_dim
        self.cluster_weight = cluster_weight
        self.lam_scale = lam_scale
        self.pretrain_epochs = pretrain_epochs
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.solver = solver
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ input
    def _check_X(self, X, *, reset):
        X = validate_data(self, X, reset=reset, accept_sparse="csr",
                          dtype=list(FLOAT_DTYPES), ensure_all_finite=False)
        return check_matrix(X, "X", nonnegative=False)

    def _check_hidden_layer_sizes(self):
        sizes = self.hidden_layer_sizes
        if isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
            sizes = (sizes,)  # one hidden layer, as scikit-learn's MLP accepts
        try:
            sizes = tuple(sizes)
        except TypeError:
            sizes = None
        if sizes is None or not all(
                isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 1
                for s in sizes):
            raise ValueError(
                "hidden_layer_sizes must be a sequence of positive integers (widths of the "
                "encoder's hidden layers), e.g. (500, 500, 2000); got "
                f"{self.hidden_layer_sizes!r}.")
        return tuple(int(s) for s in sizes)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Pretrain the autoencoder, initialize k-means on its codes, train jointly.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term matrix (TF-IDF with unit-length rows, as in the papers).
        y : Ignored

        Returns
        -------
        self : DCN
        """
        torch = _require_torch()
        X = self._check_X(X, reset=True)
        n_samples, n_features = X.shape
        k = check_n_components(self.n_components, n_samples)
        weight = self.cluster_weight
        hidden = self._check_hidden_layer_sizes()
        batch_size = min(int(self.batch_size), n_samples)
        rng = check_random_state(self.random_state)
        torch_seed = rng.randint(np.iinfo(np.int32).max)
        kmeans_seed = rng.randint(np.iinfo(np.int32).max)

        scale = _input_scale(X)

        with _torch_session(torch, torch_seed, self.n_threads):
            net = _build_autoencoder(torch, n_features, hidden, int(self.latent_dim))
            pretrain_history = self._pretrain(torch, net, X, scale, batch_size, rng)
            Z, recon = self._encode(torch, net, X, scale, with_reconstruction=True)

            with threadpool_limits(limits=torch.get_num_threads()):  # OpenMP of k-means
                kmeans = KMeans(n_clusters=k, n_init=10, random_state=kmeans_seed).fit(Z)
            centers = np.array(kmeans.cluster_centers_, dtype=np.float64)
            counts = np.maximum(np.bincount(kmeans.labels_, minlength=k), 1).astype(np.float64)
            lam = self._effective_lambda(weight, recon.mean(), kmeans.inertia_ / n_samples)

            history = [_objective(recon, Z, centers, lam)]
            optimizer = _make_optimizer(torch, self.solver, net.parameters(),
                                        self.learning_rate)
            with progress("DCN joint training", total=self.max_iter,
                          enabled=bool(self.verbose)) as task:
                for _ in range(self.max_iter):
                    self._joint_epoch(torch, net, optimizer, X, scale, batch_size, rng,
                                      centers, counts, lam)
                    Z, recon = self._encode(torch, net, X, scale, with_reconstruction=True)
                    history.append(_objective(recon, Z, centers, lam))
                    self._check_finite(history[-1], "joint training", len(history) - 1)
                    task.advance(1, status=f"objective {history[-1]:.4g}")

            if X.dtype == np.float64:  # labels_ == predict(X), see _encode
                Z = self._encode(torch, net, X, scale, dtype=np.float64)

        self.autoencoder_ = net.eval()
        self.input_scale_ = scale
        self.cluster_centers_ = centers
        self.cluster_counts_ = counts
        self.lam_ = float(lam)
        self.labels_ = np.argmin(_squared_distances(Z, centers), axis=1).astype(np.intp)
        self.pretrain_loss_history_ = np.asarray(pretrain_history, dtype=np.float64)
        self.objective_history_ = np.asarray(history, dtype=np.float64)
        self.objective_ = float(self.objective_history_[-1])
        self.reconstruction_err_ = float(recon.mean())
        self.n_iter_ = int(self.max_iter)
        return self

    def _effective_lambda(self, weight, recon0, kmeans0):
        """λ of eq. (3) for ``cluster_weight`` (see that parameter)."""
        if self.lam_scale == "absolute" or kmeans0 <= 0 or recon0 <= 0:
            return float(weight)
        return float(weight) * float(recon0) / float(kmeans0)

    def _check_finite(self, value, phase, epoch):
        if not np.isfinite(value):
            raise ValueError(
                f"DCN {phase} diverged: the loss became {value} at epoch {epoch}. Lower "
                f"learning_rate (now {self.learning_rate}) or cluster_weight (now {self.cluster_weight}), or use "
                "solver='adam'.")

    def _pretrain(self, torch, net, X, scale, batch_size, rng):
        """Autoencoder pretraining; returns the full-data reconstruction error per epoch."""
        optimizer = _make_optimizer(torch, self.solver, net.parameters(), self.learning_rate)
        encoder, decoder = net["encoder"], net["decoder"]
        history = [self._encode(torch, net, X, scale, with_reconstruction=True)[1].mean()]
        with progress("DCN pretraining", total=self.pretrain_epochs,
                      enabled=bool(self.verbose)) as task:
            for _ in range(self.pretrain_epochs):
                net.train()
                order = rng.permutation(X.shape[0])
                for start in range(0, X.shape[0], batch_size):
                    x = torch.from_numpy(_dense_block(X, order[start:start + batch_size]))
                    loss = ((x - decoder(encoder(x * scale)) / scale) ** 2).sum(dim=1).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                history.append(
                    self._encode(torch, net, X, scale, with_reconstruction=True)[1].mean())
                self._check_finite(history[-1], "pretraining", len(history) - 1)
                task.advance(1, status=f"reconstruction {history[-1]:.4g}")
        return history

    @staticmethod
    def _joint_epoch(torch, net, optimizer, X, scale, batch_size, rng, centers, counts, lam):
        """One epoch of Algorithm 1 over shuffled mini-batches (see the class docstring)."""
        encoder, decoder = net["encoder"], net["decoder"]
        net.train()
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            x = torch.from_numpy(_dense_block(X, order[start:start + batch_size]))
            z = encoder(x * scale)
            codes = z.detach().numpy().astype(np.float64)
            labels = np.argmin(_squared_distances(codes, centers), axis=1)       # eq. (6)
            _incremental_centroid_update(centers, counts, codes, labels)         # eq. (7)
            targets = torch.from_numpy(centers[labels].astype(np.float32))
            reconstruction = ((x - decoder(z) / scale) ** 2).sum(dim=1)
            clustering = ((z - targets) ** 2).sum(dim=1)
            loss = (reconstruction + 0.5 * lam * clustering).mean()              # eq. (4)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()                                                     # eq. (5)

    @staticmethod
    def _encode(torch, net, X, scale, with_reconstruction=False, dtype=np.float32):
        """Codes f(x) (float64, n × latent_dim) and, optionally, each ‖x − g(f(x))‖².

        Training runs in float32. With ``dtype=np.float64`` the network is evaluated in
        a float64 copy, so that codes of float64 input do not depend (beyond float64
        rounding) on which other rows share their block: BLAS sums in an order that
        depends on the block's shape.
        """
        net.eval()
        if dtype == np.float64:
            net = copy.deepcopy(net).double()
        codes, errors = [], []
        with torch.no_grad():
            for start in range(0, X.shape[0], _EVAL_BATCH):
                rows = slice(start, start + _EVAL_BATCH)
                x = torch.from_numpy(_dense_block(X, rows, dtype))
                z = net["encoder"](x * scale)
                codes.append(z.numpy().astype(np.float64))
                if with_reconstruction:
                    errors.append(((x - net["decoder"](z) / scale) ** 2).sum(dim=1)
                                  .numpy().astype(np.float64))
        Z = np.vstack(codes)
        if with_reconstruction:
            return Z, np.concatenate(errors)
        return Z

    # ------------------------------------------------------------------ inference
    def transform(self, X):
        """Latent codes ``f(x)`` of the documents.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term matrix, weighted as for :meth:`fit`.

        Returns
        -------
        codes : ndarray of shape (n_samples, latent_dim)
            In the dtype of ``X`` (float32 or float64).
        """
        check_is_fitted(self)
        torch = _require_torch()
        X = self._check_X(X, reset=False)
        with _torch_session(torch, 0, self.n_threads):
            Z = self._encode(torch, self.autoencoder_, X, self.input_scale_,
                             dtype=X.dtype.type)
        return Z.astype(X.dtype, copy=False)

    def predict(self, X):
        """Nearest centroid of each document in the latent space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term matrix, weighted as for :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster index of each document.
        """
        Z = self.transform(X).astype(np.float64, copy=False)
        return np.argmin(_squared_distances(Z, self.cluster_centers_), axis=1).astype(np.intp)


def _objective(recon, Z, centers, lam):
    """Eq. (3) divided by n, each code assigned to its nearest centroid (eq. (6))."""
    nearest = _squared_distances(Z, centers).min(axis=1)
    return float(np.mean(recon + 0.5 * lam * nearest))
